import Foundation

/// Entry point: finds the subcommand and runs it. Kept thin on purpose.
@main
enum RetroRapidMain {
    /// Every subcommand, in the order `help` lists them.
    static var commands: [any Command.Type] {
        [
            ServeCommand.self,
            MigrateCommand.self,
            SimCommand.self,
            BenchEngineCommand.self,
            BenchStorageCommand.self,
            CodesCommand.self,
            PlayersCommand.self,
            OrdersCommand.self,
            GamesCommand.self,
            OperatorsCommand.self,
            AuditCommand.self,
            BackupCommand.self,
            CopyDatabaseCommand.self,
            VerifyCommand.self,
            CrashWriterCommand.self,
            SeedPlayersCommand.self,
            LoadTestCommand.self,
        ]
    }

    /// What asks for help wherever it is typed: `retrorapid migrate --help`, `codes create -h`.
    static let helpOptions: Set<String> = ["-h", "--help"]

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, name != "help", !helpOptions.contains(name) else {
            let topic = arguments.dropFirst().first
            if let topic, topic != "help", !helpOptions.contains(topic), !commands.contains(where: { $0.name == topic }) {
                printError("unknown command '\(topic)'. Run 'retrorapid help' for the list.")
                exit(64)
            }
            printHelp(for: topic)
            exit(arguments.isEmpty ? 64 : 0)
        }
        arguments.removeFirst()
        guard let command = commands.first(where: { $0.name == name }) else {
            printError("unknown command '\(name)'. Run 'retrorapid help' for the list.")
            exit(64)
        }
        if wantsHelp(arguments) {
            // Before anything is parsed or opened, so asking how to use a command never runs it.
            print(command.usage)
            exit(0)
        }
        do {
            exit(try command.run(arguments: arguments))
        } catch let error as UsageError {
            // The reason and where the usage is: a 40-line usage after it would bury the reason.
            // A subcommand the usage names (`codes create`) is pointed at itself.
            let subcommand = arguments.first.flatMap { word in
                !word.hasPrefix("-") && command.usage.contains("retrorapid \(name) \(word)") ? " \(word)" : nil
            } ?? ""
            printError("\(error)\nRun 'retrorapid \(name)\(subcommand) --help' for how to call it.")
            exit(64)
        } catch {
            printError("\(error)")
            exit(1)
        }
    }

    /// `-h` or `--help` anywhere before a `--` (after it every word is data). No option takes
    /// either as its value: the parser never takes a word starting with `--` as one, and a
    /// value of `-h` would be a mistake worth the usage text.
    static func wantsHelp(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains { helpOptions.contains($0) }
    }

    static func printHelp(for name: String?) {
        if let name, let command = commands.first(where: { $0.name == name }) {
            print(command.usage)
            return
        }
        print("usage: retrorapid COMMAND [OPTIONS]\n\ncommands:")
        let width = commands.map { $0.name.count }.max() ?? 0
        for command in commands {
            print("  \(command.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(command.summary)")
        }
        print("\nRun 'retrorapid help COMMAND' for a command's options.")
    }

    static func printError(_ message: String) {
        var standardError = StandardError()
        print("retrorapid: \(message)", to: &standardError)
    }
}

/// Lets `print(_:to:)` write to standard error.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
