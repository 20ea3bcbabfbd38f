/// A mistake in a command line. Each message names the option as the user typed it and says
/// what would have been accepted, so it can be printed as-is above the usage text.
public enum ArgumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The option isn't one the command declared. Short options keep their dash (`-h`).
    case unknownOption(String)
    /// A value option came last, or was followed by another option instead of a value.
    case missingValue(String)
    /// The same option was given twice; rejected so a script's mistake can't silently win.
    case repeated(String)
    /// The value didn't parse; the last field says what was expected.
    case invalidValue(String, String, String)

    public var description: String {
        switch self {
        case .unknownOption(let name):
            "unknown option \(Self.spelling(name))"
        case .missingValue(let name):
            "\(Self.spelling(name)) needs a value"
        case .repeated(let name):
            "\(Self.spelling(name)) was given more than once"
        case .invalidValue(let name, let value, let expected):
            "\(Self.spelling(name)) expects \(expected), got '\(value)'"
        }
    }

    /// Long names are stored without dashes; short ones as typed, because there is no long form
    /// to show for an option nobody declared.
    static func spelling(_ name: String) -> String {
        name.hasPrefix("-") ? name : "--\(name)"
    }
}

/// A command line split into options, switches and positionals. Shared by every subcommand and by
/// `ServerConfiguration` so all of them accept the same syntax and report mistakes the same way.
public struct ParsedArguments: Sendable {
    public private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    private let booleanFlags: Set<String>
    private let valueOptions: Set<String>

    /// Option names come without dashes. Accepts `--name value`, `--name=value`, `--flag`, and
    /// positionals; everything after `--` is positional.
    ///
    /// `aliases` maps an older name to the option it now spells (`database` → `database-path`),
    /// so scripts written against the old name keep working: the value is read under the
    /// current name, and giving both is `repeated`, like giving one twice.
    public init(
        _ arguments: [String], booleanFlags: Set<String> = [], valueOptions: Set<String>, aliases: [String: String] = [:]
    ) throws {
        precondition(
            booleanFlags.isDisjoint(with: valueOptions),
            "an option can't be both a switch and take a value: \(booleanFlags.intersection(valueOptions))"
        )
        precondition(
            aliases.keys.allSatisfy { !booleanFlags.contains($0) && !valueOptions.contains($0) }
                && aliases.values.allSatisfy { booleanFlags.contains($0) || valueOptions.contains($0) },
            "an alias must be a new name for a declared option: \(aliases)"
        )
        self.booleanFlags = booleanFlags
        self.valueOptions = valueOptions

        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1

            if argument == "--" {
                positionals.append(contentsOf: arguments[index...])
                break
            }
            guard argument.hasPrefix("--") else {
                // A lone "-" (stdin by convention) and negative numbers are data, not options.
                let negativeNumber = argument.dropFirst().first.map { $0.isASCII && ($0.isNumber || $0 == ".") } ?? false
                if argument.count > 1, argument.hasPrefix("-"), !negativeNumber {
                    throw ArgumentError.unknownOption(argument)
                }
                positionals.append(argument)
                continue
            }

            let body = argument.dropFirst(2)
            let typed: String
            let inlineValue: String?
            if let equals = body.firstIndex(of: "=") {
                typed = String(body[..<equals])
                inlineValue = String(body[body.index(after: equals)...])
            } else {
                typed = String(body)
                inlineValue = nil
            }
            let name = aliases[typed] ?? typed

            if booleanFlags.contains(name) {
                if let inlineValue {
                    throw ArgumentError.invalidValue(typed, inlineValue, "no value")
                }
                guard flags.insert(name).inserted else { throw ArgumentError.repeated(name) }
            } else if valueOptions.contains(name) {
                guard values[name] == nil else { throw ArgumentError.repeated(name) }
                if let inlineValue {
                    values[name] = inlineValue
                } else if index < arguments.endIndex, !arguments[index].hasPrefix("--") {
                    values[name] = arguments[index]
                    index += 1
                } else {
                    throw ArgumentError.missingValue(typed)
                }
            } else {
                throw ArgumentError.unknownOption(name)
            }
        }
    }

    /// The raw value, or nil when the option wasn't given.
    public func value(_ name: String) -> String? {
        precondition(valueOptions.contains(name), "--\(name) was not declared as a value option")
        return values[name]
    }

    public func flag(_ name: String) -> Bool {
        precondition(booleanFlags.contains(name), "--\(name) was not declared as a switch")
        return flags.contains(name)
    }

    /// The default is returned unchecked: it is the caller's constant, not user input.
    public func int(_ name: String, default defaultValue: Int, range: ClosedRange<Int>? = nil) throws -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let number = Int(text), range?.contains(number) ?? true else {
            let expected = range.map { "a whole number from \($0.lowerBound) to \($0.upperBound)" } ?? "a whole number"
            throw ArgumentError.invalidValue(name, text, expected)
        }
        return number
    }

    public func string(_ name: String, default defaultValue: String, allowed: [String]? = nil) throws -> String {
        guard let text = value(name) else { return defaultValue }
        if let allowed, !allowed.contains(text) {
            throw ArgumentError.invalidValue(name, text, "one of \(allowed.joined(separator: ", "))")
        }
        return text
    }
}
