import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid operators add|list|disable|reset`: the accounts of the people who run the
/// service (docs/OPERATIONS.md, "Operator accounts"), apart from the players. The rules live
/// in `OperatorRepository` and the password's making and hashing in `OperatorPassword`; this
/// parses, calls them and prints. A password is shown once, here, and never stored in clear.
enum OperatorsCommand: Command {
    static let name = "operators"
    static let summary = "add, list, disable operator accounts and reset their passwords"
    static let usage = """
        usage: retrorapid operators add NAME [--role viewer|admin]
               retrorapid operators list
               retrorapid operators disable NAME
               retrorapid operators reset NAME
               (each also takes --database-url URL or --database-path PATH, and --migrations-path DIR)

        add      Makes an account and prints its password, once: 20 random characters, shown
                 in groups of five (case and dashes do not matter when typed). NAME is 2 to 32
                 lowercase letters, digits, '.', '_' and '-', starting with a letter; a name is
                 never reused, even once disabled.
          --role ROLE   viewer (sees everything, changes nothing) or admin (also changes
                        players, codes and orders); default viewer
        list     Every account, oldest first: role, when made, when its password was set,
                 and when disabled.
        disable  Ends an account for good: it can no longer sign in.
        reset    Gives an account that is not disabled a new password, printed once; the old
                 one stops working at once.

        \(OperatorDatabase.optionsUsage)

        Exit status: 0 done, 1 refused (the name is taken, unknown, disabled, …), 64 bad arguments.
        A refused or mistyped command changes nothing.
        """

    static func run(arguments: [String]) throws -> Int32 {
        guard let subcommand = arguments.first, !subcommand.hasPrefix("-") else {
            throw UsageError("say what to do first: add, list, disable or reset")
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "add": return try add(rest)
        case "list": return try list(rest)
        case "disable": return try disable(rest)
        case "reset": return try reset(rest)
        default: throw UsageError("unknown operators command '\(subcommand)'; use add, list, disable or reset")
        }
    }

    /// The arguments with the one NAME every subcommand but `list` takes, checked before the
    /// database is opened.
    static func parseName(_ arguments: [String], command: String, valueOptions: Set<String> = []) throws -> (String, ParsedArguments) {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions.union(valueOptions), aliases: OperatorDatabase.aliases)
        }
        guard let name = parsed.positionals.first else { throw UsageError("operators \(command) needs the operator's NAME") }
        guard parsed.positionals.count == 1 else { throw UsageError("unexpected argument '\(parsed.positionals[1])'") }
        return (try OperatorDatabase.reportingRefusals { try OperatorAccount.validatedName(name) }, parsed)
    }

    static func add(_ arguments: [String]) throws -> Int32 {
        let (name, parsed) = try parseName(arguments, command: "add", valueOptions: ["role"])
        let roleText = parsed.value("role") ?? OperatorAccount.Role.viewer.rawValue
        guard let role = OperatorAccount.Role(rawValue: roleText) else {
            throw UsageError("--role expects viewer or admin, got '\(roleText)'")
        }
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let password = OperatorPassword.generate()
        let account = try OperatorDatabase.reportingRefusals {
            try connection.audited(by: OperatorDatabase.actor, action: "operators.add", subject: name, now: now,
                                   repositories: storage) { () -> (value: OperatorAccount, before: String?, after: String?) in
                let account = try storage.operators.add(name: name, role: role, passwordHash: OperatorPassword.hash(password), now: now)
                return (account, nil, "\(account.role.rawValue), password set")
            }
        }
        print("added operator \(account.name) (\(account.role.rawValue)); their password, shown only now:")
        print("  \(password)")
        return 0
    }

    static func list(_ arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions, aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        let accounts = try OperatorDatabase(parsed).open().operators.list()
        guard !accounts.isEmpty else {
            print("no operators yet; add one with 'retrorapid operators add NAME --role admin'")
            return 0
        }
        var table = TextTable(["NAME", "ROLE", "ADDED", "PASSWORD SET", "DISABLED"])
        for account in accounts {
            table.append([account.name, account.role.rawValue, OperatorTime.text(account.createdAt),
                          OperatorTime.text(account.passwordSetAt), account.disabledAt.map(OperatorTime.text) ?? "no"])
        }
        print(table.render())
        return 0
    }

    static func disable(_ arguments: [String]) throws -> Int32 {
        let (name, parsed) = try parseName(arguments, command: "disable")
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let (before, after) = try OperatorDatabase.reportingRefusals {
            try connection.audited(by: OperatorDatabase.actor, action: "operators.disable", subject: name, now: now,
                                   repositories: storage) { () -> (value: (OperatorAccount, OperatorAccount), before: String?, after: String?) in
                let before = try storage.operators.account(named: name).account
                let after = try storage.operators.disable(name: name, now: now)
                guard before.disabledAt == nil else { return ((before, after), nil, nil) }
                return ((before, after), "\(before.role.rawValue), may sign in", "disabled at \(OperatorTime.text(now))")
            }
        }
        if let earlier = before.disabledAt {
            print("operator \(after.name) was already disabled at \(OperatorTime.text(earlier)); nothing changed")
        } else {
            print("disabled operator \(after.name) at \(after.disabledAt.map(OperatorTime.text) ?? OperatorTime.text(now))")
        }
        return 0
    }

    static func reset(_ arguments: [String]) throws -> Int32 {
        let (name, parsed) = try parseName(arguments, command: "reset")
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let password = OperatorPassword.generate()
        let account = try OperatorDatabase.reportingRefusals {
            try connection.audited(by: OperatorDatabase.actor, action: "operators.reset", subject: name, now: now,
                                   repositories: storage) { () -> (value: OperatorAccount, before: String?, after: String?) in
                let before = try storage.operators.account(named: name).account
                let account = try storage.operators.resetPassword(name: name, passwordHash: OperatorPassword.hash(password), now: now)
                // Never the password or its hash: only that it changed.
                return (account, "password set at \(OperatorTime.text(before.passwordSetAt))",
                        "password set at \(OperatorTime.text(account.passwordSetAt))")
            }
        }
        print("new password for operator \(account.name), shown only now (the old one no longer works):")
        print("  \(password)")
        return 0
    }
}
