import Foundation
import RetroRapidStorage
import RetroRapidSupport

/// `retrorapid copy-database --to postgres://…`: copies the SQLite database, every table, into
/// an empty PostgreSQL database, in one transaction, and checks the copy before committing it.
/// The work is `StorageCopier`'s (RetroRapidStorage); this parses, prints and sets the status.
///
/// Threading rule: everything runs on the command's main thread, which owns both connections.
enum CopyDatabaseCommand: Command {
    static let name = "copy-database"
    static let summary = "copy the SQLite database into an empty PostgreSQL database, checked"
    static let usage = """
        usage: retrorapid copy-database --to postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE
                                        [--database-path PATH] [--migrations-path DIR]

        Copies every table of the SQLite database at PATH into the PostgreSQL database of the
        URL, keeping every id, then moves PostgreSQL's id sequences past the largest ids. The
        PostgreSQL database must be empty (no rows in any of the tables): its migrations
        (DIR/postgresql) are applied first. The copy is written in one transaction and, before
        it commits, every table's row count and a digest of all its rows are compared with
        SQLite's: any refusal, failure or difference rolls everything back.

        The SQLite database is read as one snapshot: rows a running server writes after the copy
        starts are not copied, so stop the server first (docs/OPERATIONS.md, "Moving from SQLite
        to PostgreSQL"). The SQLite file is not changed: keep it to go back.

          --to URL               the PostgreSQL database to fill (postgres:// or postgresql://);
                                 a password in it is never printed
        \(OperatorDatabase.optionsUsage)

        Exit status: 0 copied and checked, 1 refused or failed (nothing copied: the SQLite
        database has pending migrations, the PostgreSQL database is not empty or cannot be
        reached, a row does not fit, the copy did not match), 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions.union(["to"]), aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        guard let given = parsed.value("to") else { throw UsageError("copy-database needs --to postgres://… naming the PostgreSQL database to fill") }
        let target: DatabaseURL.PostgreSQL
        do {
            guard case .postgres(let server) = try DatabaseURL(parsing: given) else {
                throw UsageError("--to expects a postgres:// or postgresql:// URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)")
            }
            target = server
        } catch let error as DatabaseURLError {
            throw UsageError("--to: \(error.description)")
        }
        let shownURL = target.redacted
        let database = try OperatorDatabase(parsed)
        guard database.migrations.found != nil else { throw OperatorFailure(database.migrations.missingMessage) }
        let source = try database.openWithoutMigrating()

        OperatorOutput.note("copying \(database.location) to \(shownURL)…")
        let started = Date()
        var shownPercent = -1
        var lastTable = ""
        let report: StorageCopier.Report
        do {
            report = try StorageFactory.copy(from: source, to: target, migrationsPath: database.migrationsPath) { progress in
                // A line when a table starts and every tenth of the way: a log of the move
                // without a line per batch.
                let percent = progress.totalRows == 0 ? 100 : progress.copiedRows * 100 / progress.totalRows
                guard progress.table != lastTable || percent / 10 > shownPercent / 10 else { return }
                lastTable = progress.table
                shownPercent = percent
                OperatorOutput.note("copied \(progress.copiedRows) of \(progress.totalRows) rows (\(percent) %), now \(progress.table)")
            }
        } catch let failure as StorageFactory.CopyFailure {
            throw OperatorFailure(failure.description)
        }
        for migration in report.appliedTargetMigrations {
            OperatorOutput.note("applied migration \(migration) to \(shownURL)")
        }
        let seconds = Date().timeIntervalSince(started)

        var table = TextTable(["TABLE", "ROWS", "HOW"])
        for copied in report.tables {
            table.append([copied.name, String(copied.rows), copied.rebuiltByTrigger ? "rebuilt by PostgreSQL's trigger, checked" : "copied, checked"])
        }
        print("copied \(report.copiedRows) rows from \(database.location) to \(shownURL) in \(String(format: "%.1f", seconds)) s")
        print(table.render())
        print("every table's row count and row digest match the SQLite database; new rows get ids after the copied ones")
        return 0
    }
}
