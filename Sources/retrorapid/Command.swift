/// One subcommand of `retrorapid`. Each lives in its own file and only parses its
/// arguments and calls into the library targets; the work itself lives there.
protocol Command {
    /// The word after `retrorapid`, e.g. `sim`.
    static var name: String { get }
    /// One line for `retrorapid help`.
    static var summary: String { get }
    /// Full usage text, printed for `retrorapid help NAME` and `--help` (a usage error points to it).
    static var usage: String { get }
    /// Runs with the arguments after the command name; returns the process exit code.
    static func run(arguments: [String]) throws -> Int32
}

/// A mistake in how a command was called: printed with a pointer to the command's `--help`,
/// exit code 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
