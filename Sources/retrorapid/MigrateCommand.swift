import Foundation
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidSupport

/// `retrorapid migrate`: brings the database up to its migrations, or shows where it stands.
/// The work is the storage backend's (`StorageFactory`; SQLite's `Migrator`); this only parses arguments and prints.
enum MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply database migrations, or show their status"
    static let usage = """
        usage: retrorapid migrate [--database-url URL | --database-path PATH] [--migrations-path DIR] [--status]

        Applies every pending migration of DIR (a PostgreSQL database's: DIR/postgresql) to the
        database, in order, each in its own transaction. Refuses to run, changing nothing, when an
        applied migration's file was edited or is missing. Creates a SQLite database file when it
        does not exist.

          --status               list applied and pending migrations; apply nothing
        \(OperatorDatabase.optionsUsage)
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, booleanFlags: ["status"], valueOptions: OperatorDatabase.valueOptions,
                                aliases: OperatorDatabase.aliases)
        }
        if let extra = parsed.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let database = try OperatorDatabase(parsed)
        guard database.migrations.found != nil else { throw OperatorFailure(database.migrations.missingMessage) }
        let statusOnly = parsed.flag("status")
        if statusOnly {
            // Asking for the status must not create an empty database.
            let storage: any StorageConnection
            do {
                storage = try StorageFactory.open(database.configuration, ifMissing: .refuse)
            } catch StorageFactoryError.missing {
                let folder = StorageFactory.migrationsFolder(for: database.url, in: database.migrationsPath)
                print("no database at \(database.location) yet")
                for identifier in try StorageFactory.migrations(in: folder) { print("pending  \(identifier)") }
                return 0
            }
            print("database \(database.location)")
            for record in try storage.appliedMigrations() {
                print("applied  \(record.identifier)  \(record.appliedAt)")
            }
            let pending = try storage.pendingMigrations()
            for identifier in pending { print("pending  \(identifier)") }
            if pending.isEmpty { print("up to date") }
            return 0
        }

        let storage = try StorageFactory.open(database.configuration, ifMissing: .create)
        let applied = try storage.migrate()
        for record in applied {
            print("applied  \(record.identifier)")
        }
        if applied.isEmpty { print("up to date") }
        return 0
    }
}
