import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid audit`: the audit log, newest first (docs/OPERATIONS.md, "Audit log"): every
/// change an operator made with the CLI or the console, who, when, what, before and after.
/// Read-only; the log is never edited.
enum AuditCommand: Command {
    static let name = "audit"
    static let summary = "show who changed what, newest first"
    static let usage = """
        usage: retrorapid audit [--limit N] [--before ID]
               (also takes --database-url URL or --database-path PATH, and --migrations-path DIR)

        Prints the audit log, newest first: each change an operator made (codes created and
        disabled, unlimited play granted, devices revoked, orders marked paid, operator
        accounts added, reset and disabled), by whom (cli:USER for the system user who ran a
        command, console:NAME for an operator account), when, and the state before and after.
          --limit N    how many entries, 1 to 500 (default 50)
          --before ID  only entries older than entry ID (for the next page: the last ID shown)

        \(OperatorDatabase.optionsUsage)

        Exit status: 0 done, 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions.union(["limit", "before"]),
                                aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        let limit = try OperatorDatabase.reportingRefusals { try parsed.int("limit", default: 50, range: 1...500) }
        var before: Int64?
        if let text = parsed.value("before") {
            guard let id = Int64(text), id > 0 else { throw UsageError("--before expects an entry's ID (a whole number), got '\(text)'") }
            before = id
        }
        let entries = try OperatorDatabase(parsed).open().auditLog.entries(limit: limit, before: before)
        guard !entries.isEmpty else {
            print(before == nil ? "no changes recorded yet" : "no older entries")
            return 0
        }
        var table = TextTable(["ID", "AT", "ACTOR", "ACTION", "SUBJECT", "BEFORE", "AFTER"])
        for entry in entries {
            table.append([String(entry.id), OperatorTime.text(entry.at), entry.actor, entry.action, entry.subject,
                          entry.before ?? "-", entry.after ?? "-"])
        }
        print(table.render())
        return 0
    }
}
