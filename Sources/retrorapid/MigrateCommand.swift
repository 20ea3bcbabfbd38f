import Foundation
import RetroRapidStorage

/// `retrorapid migrate`: brings the database up to `Migrations/`, or shows where it stands.
/// The work is the storage backend's (`StorageFactory`; SQLite's `Migrator`); this only parses arguments and prints.
enum MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply database migrations, or show their status"
    static let usage = """
        usage: retrorapid migrate [--database PATH] [--migrations DIR] [--status]

        Applies every pending migration of DIR to the SQLite database at PATH, in order, each in
        its own transaction. Refuses to run, changing nothing, when an applied migration's file
        was edited or is missing.

        options:
          --database PATH    the database file (default: data/retrorapid.sqlite; created if missing)
          --migrations DIR   the folder of NNNN_name.sql files (default: Migrations)
          --status           list applied and pending migrations; apply nothing
        """

    static func run(arguments: [String]) throws -> Int32 {
        var databasePath = "data/retrorapid.sqlite"
        var migrationsPath = "Migrations"
        var statusOnly = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--database":
                guard let value = remaining.popFirst() else { throw UsageError("--database needs a PATH") }
                databasePath = value
            case "--migrations":
                guard let value = remaining.popFirst() else { throw UsageError("--migrations needs a DIR") }
                migrationsPath = value
            case "--status":
                statusOnly = true
            default:
                throw UsageError("unknown argument '\(argument)'")
            }
        }
        if statusOnly {
            // Asking for the status must not create an empty database file.
            guard FileManager.default.fileExists(atPath: databasePath) else {
                let pending = try StorageFactory.migrations(in: migrationsPath)
                print("no database at \(databasePath) yet")
                for identifier in pending { print("pending  \(identifier)") }
                return 0
            }
            let storage = try StorageFactory.open(path: databasePath, migrationsPath: migrationsPath, ifMissing: .refuse)
            print("database \(databasePath)")
            for record in try storage.appliedMigrations() {
                print("applied  \(record.identifier)  \(record.appliedAt)")
            }
            let pending = try storage.pendingMigrations()
            for identifier in pending { print("pending  \(identifier)") }
            if pending.isEmpty { print("up to date") }
            return 0
        }

        let storage = try StorageFactory.open(path: databasePath, migrationsPath: migrationsPath, ifMissing: .create)
        let applied = try storage.migrate()
        for record in applied {
            print("applied  \(record.identifier)")
        }
        if applied.isEmpty { print("up to date") }
        return 0
    }
}
