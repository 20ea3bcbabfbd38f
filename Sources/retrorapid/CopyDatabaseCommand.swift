import Foundation
import RetroRapidPostgreSQL
import RetroRapidSQLite
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
        guard let url = parsed.value("to") else { throw UsageError("copy-database needs --to postgres://… naming the PostgreSQL database to fill") }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            // Not echoed: what was typed may hold a password in a form the redaction does not know.
            throw UsageError("--to expects a postgres:// or postgresql:// URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)")
        }
        let shownURL = redacted(url)
        let database = try OperatorDatabase(parsed)
        guard database.migrations.found != nil else { throw OperatorFailure(database.migrations.missingMessage) }

        guard let source = try database.openWithoutMigrating() as? SQLiteStorage else {
            throw OperatorFailure("the source \(database.path) is not a SQLite database; copy-database copies SQLite into PostgreSQL")
        }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo: url)
        } catch let error as PostgresError {
            throw OperatorFailure("cannot reach the PostgreSQL database \(shownURL), so nothing was copied: \(error.message)")
        }
        let target = PostgresStorage(connection: connection,
                                     migrations: URL(fileURLWithPath: database.migrationsPath, isDirectory: true).appendingPathComponent("postgresql", isDirectory: true),
                                     location: shownURL)

        OperatorOutput.note("copying \(database.path) to \(shownURL)…")
        let started = Date()
        var shownPercent = -1
        var lastTable = ""
        let report: StorageCopier.Report
        do {
            report = try StorageCopier(from: source, to: target).copy { progress in
                // A line when a table starts and every tenth of the way: a log of the move
                // without a line per batch.
                let percent = progress.totalRows == 0 ? 100 : progress.copiedRows * 100 / progress.totalRows
                guard progress.table != lastTable || percent / 10 > shownPercent / 10 else { return }
                lastTable = progress.table
                shownPercent = percent
                OperatorOutput.note("copied \(progress.copiedRows) of \(progress.totalRows) rows (\(percent) %), now \(progress.table)")
            }
        } catch let refusal as StorageCopier.Refusal {
            throw OperatorFailure(refusal.message)
        } catch let error as PostgresError {
            throw OperatorFailure("copying to \(shownURL) failed and was rolled back, so nothing was copied: \(error.message)")
        }
        for migration in report.appliedTargetMigrations {
            OperatorOutput.note("applied migration \(migration) to \(shownURL)")
        }
        let seconds = Date().timeIntervalSince(started)

        var table = TextTable(["TABLE", "ROWS", "HOW"])
        for copied in report.tables {
            table.append([copied.name, String(copied.rows), copied.rebuiltByTrigger ? "rebuilt by PostgreSQL's trigger, checked" : "copied, checked"])
        }
        print("copied \(report.copiedRows) rows from \(database.path) to \(shownURL) in \(String(format: "%.1f", seconds)) s")
        print(table.render())
        print("every table's row count and row digest match the SQLite database; new rows get ids after the copied ones")
        return 0
    }

    /// The URL with its password (after `user:`, or a `password=` parameter) as `***`, for
    /// every message: the URL as typed is only ever handed to libpq.
    static func redacted(_ url: String) -> String {
        var shown = url
        if let schemeEnd = shown.range(of: "://"), let at = shown[schemeEnd.upperBound...].lastIndex(of: "@"),
           let colon = shown[schemeEnd.upperBound..<at].firstIndex(of: ":") {
            // The last `@` ends the user and password (a raw `@` in a password would end it
            // later than the first); anything between the user's `:` and it is hidden.
            shown.replaceSubrange(shown.index(after: colon)..<at, with: "***")
        }
        if let query = shown.firstIndex(of: "?") {
            let parameters = shown[shown.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
                parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
            }
            shown = String(shown[...query]) + parameters.joined(separator: "&")
        }
        return shown
    }
}
