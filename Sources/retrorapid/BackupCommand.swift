import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid backup FILE`: a consistent copy of the live database, taken while the server
/// runs, through SQLite's online backup API (`Database.backup(to:)`).
///
/// The copy is one snapshot: it reads inside one read transaction, so it holds every
/// transaction committed before it started and none of the ones after, while the server keeps
/// reading and writing (WAL). Copying the file with `cp` instead could catch the database file
/// and its `-wal` at different moments, and silently miss committed games.
enum BackupCommand: Command {
    static let name = "backup"
    static let summary = "copy the live database to FILE, consistently, while the server runs"
    static let usage = """
        usage: retrorapid backup FILE [--force] [--database-url sqlite:PATH | --database-path PATH]

        Copies the database to FILE with SQLite's online backup API: one consistent snapshot,
        safe while the server runs (it keeps serving and writing; the copy holds every game
        committed before the backup began). Then checks the copy with PRAGMA integrity_check and
        prints its size and row counts. Migrates nothing: the copy is the database as it is.

          --force            replace FILE if it exists (refused otherwise)
          --database-url URL     the database to copy (default: the server's setting: RETRORAPID_DATABASE_URL
                                 or _PATH, the env file, or sqlite:data/retrorapid.sqlite; see 'retrorapid
                                 help serve'). A sqlite: URL only: a PostgreSQL database is backed up with
                                 pg_dump (docs/OPERATIONS.md, "Back up and restore")
          --database-path PATH   the same as --database-url sqlite:PATH (--database is its older name, still accepted)

        To restore: stop the server, move the database file aside together with any -wal and
        -shm files next to it, copy FILE into its place, and start the server (docs/OPERATIONS.md).

        Exit status: 0 copied and checked, 1 failed or refused (FILE exists, the copy is
        damaged), 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, booleanFlags: ["force"], valueOptions: OperatorDatabase.valueOptions, aliases: OperatorDatabase.aliases)
        }
        guard let file = parsed.positionals.first else { throw UsageError("backup needs the FILE to write") }
        guard parsed.positionals.count == 1 else { throw UsageError("unexpected argument '\(parsed.positionals[1])'") }
        let source = try OperatorDatabase(parsed)
        // Before FILE is looked at: SQLite's online backup copies a file; a server has its own tools.
        guard case .sqlite = source.url else {
            throw OperatorFailure("backup copies a SQLite database with SQLite's online backup; \(source.location) is a "
                + "PostgreSQL database: back it up with pg_dump (docs/OPERATIONS.md, \"Back up and restore\")")
        }

        let destination = URL(fileURLWithPath: file)
        let folder = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OperatorFailure("cannot write \(file): the folder \(folder.path) does not exist")
        }
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw OperatorFailure("\(file) is a folder; name the backup file inside it") }
            guard parsed.flag("force") else {
                throw OperatorFailure("\(file) already exists; choose a new name, or pass --force to replace it")
            }
        }

        let connection = try source.openWithoutMigrating()
        let started = Date()
        // The backend copies and then checks the copy as a restore would use it: a connection
        // of its own, reading the file.
        let backup = try connection.backup(to: destination.path) { _, _ in }
        let seconds = Date().timeIntervalSince(started)
        let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.int64Value ?? 0
        guard backup.problems.isEmpty else {
            throw OperatorFailure("the copy \(file) failed PRAGMA integrity_check: \(backup.problems.joined(separator: "; ")); do not rely on it")
        }
        let counts = backup.rowCounts.map { "\($0.rows) \($0.table)" }
        print("backed up \(source.location) to \(file): \(size) bytes (\(backup.copiedUnits) pages) in \(String(format: "%.2f", seconds)) s")
        print("integrity_check: ok")
        if !counts.isEmpty { print("the copy holds \(counts.joined(separator: ", "))") }
        return 0
    }
}
