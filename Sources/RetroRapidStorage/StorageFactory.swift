import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQLite
import RetroRapidSupport

/// Opens storage from the configuration: the one place that picks a backend, used by `serve`
/// (the `DatabaseWorker`'s storage thread) and by every operator command.
///
/// The backend is chosen by the database URL (`--database-url`, `DatabaseURL`): `sqlite:PATH`
/// is a SQLite file with its schema from `migrationsPath`; `postgres://…` a PostgreSQL server
/// with its schema from `migrationsPath/postgresql`. Each backend is a target of its own that
/// implements ``StorageConnection``, and Tests/RetroRapidStorageTests runs the same contract
/// tests against each.
public enum StorageFactory {
    /// What to do when there is no store yet.
    public enum Missing: Sendable {
        /// Create it (and the folders above a file): `serve`, `migrate`.
        case create
        /// Refuse with ``StorageFactoryError/missing(_:)``: the operator's commands, where a
        /// missing file usually means a mistyped path that an empty new store would hide.
        case refuse
    }

    /// How much a commit that returned is worth after a power loss (docs/OPERATIONS.md,
    /// "Durability"). Anything but `.everyCommit` is for benchmarks and throwaway data.
    public enum Durability: Sendable {
        /// Every commit that returned survives a power loss: the server's, the default.
        case everyCommit
        /// Safe from corruption and from a crash of the process; a power loss can lose the last
        /// commits (SQLite: `synchronous=NORMAL` under WAL).
        case lastCommitsMayBeLost
        /// Nothing is forced to disk (SQLite: `synchronous=OFF`).
        case none
    }

    /// Opens the store the configuration names (`databaseURL`).
    public static func open(_ configuration: ServerConfiguration, ifMissing: Missing,
                            durability: Durability = .everyCommit) throws -> any StorageConnection {
        try open(url: configuration.databaseURL, migrationsPath: configuration.migrationsPath,
                 ifMissing: ifMissing, durability: durability)
    }

    /// Opens the store `url` names, with the schema from `migrationsPath` (the SQLite
    /// migrations' folder; PostgreSQL's are in its `postgresql` subfolder).
    public static func open(url: DatabaseURL, migrationsPath: String, ifMissing: Missing,
                            durability: Durability = .everyCommit) throws -> any StorageConnection {
        switch url {
        case .sqlite(let path):
            return try openSQLite(path: path, migrationsPath: migrationsFolder(for: url, in: migrationsPath),
                                  ifMissing: ifMissing, durability: durability)
        case .postgres(let server):
            return try openPostgreSQL(server, migrationsPath: migrationsFolder(for: url, in: migrationsPath),
                                      ifMissing: ifMissing, durability: durability)
        }
    }

    /// Opens a SQLite file at `path` with the schema from `migrationsPath` (benchmarks and
    /// test aids that make files of their own).
    public static func open(path: String, migrationsPath: String, ifMissing: Missing,
                            durability: Durability = .everyCommit) throws -> any StorageConnection {
        try openSQLite(path: path, migrationsPath: migrationsPath, ifMissing: ifMissing, durability: durability)
    }

    /// The folder of `url`'s backend's migrations, given `--migrations-path` (`migrationsPath`):
    /// SQLite's are in it, PostgreSQL's in its `postgresql` subfolder (Migrations/postgresql).
    public static func migrationsFolder(for url: DatabaseURL, in migrationsPath: String) -> String {
        switch url {
        case .sqlite: migrationsPath
        case .postgres: URL(fileURLWithPath: migrationsPath, isDirectory: true).appendingPathComponent("postgresql").path
        }
    }

    /// The identifiers (`0001_initial`) of the migrations in `migrationsPath`, in order: what
    /// a store that does not exist yet would get.
    public static func migrations(in migrationsPath: String) throws -> [String] {
        try MigrationPlan.load(from: URL(fileURLWithPath: migrationsPath, isDirectory: true)).map(\.identifier)
    }

    private static func openSQLite(path: String, migrationsPath: String, ifMissing: Missing,
                                   durability: Durability) throws -> SQLiteStorage {
        if ifMissing == .refuse, !FileManager.default.fileExists(atPath: path) {
            throw StorageFactoryError.missing(path)
        }
        let synchronous: Database.Synchronous
        switch durability {
        case .everyCommit: synchronous = .full
        case .lastCommitsMayBeLost: synchronous = .normal
        case .none: synchronous = .off
        }
        let database = try Database(path: path, createParentDirectories: ifMissing == .create, synchronous: synchronous)
        return SQLiteStorage(database: database, migrations: URL(fileURLWithPath: migrationsPath, isDirectory: true))
    }

    /// The PostgreSQL backend's one entry point: `server.conninfo` is what libpq connects with;
    /// messages and `location` use `server.redacted`.
    private static func openPostgreSQL(_ server: DatabaseURL.PostgreSQL, migrationsPath: String, ifMissing: Missing,
                                       durability: Durability) throws -> any StorageConnection {
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo: server.conninfo)
        } catch let error as PostgresError where error.message.contains("database \"\(server.database)\" does not exist") {
            // The server makes tables, never databases: creating one is the operator's (or
            // their provider's) decision, with its owner and encoding.
            guard ifMissing == .refuse else {
                throw StorageFactoryError.unsupported(
                    "no database \(server.database) on the PostgreSQL server at \(server.redacted); create it first "
                        + "(createdb --owner USER \(server.database)): RetroRapid makes its tables, not the database")
            }
            throw StorageFactoryError.missing(server.redacted)
        } catch let error as PostgresError {
            throw StorageFactoryError.unreachable(server.redacted, error.message)
        }
        switch durability {
        case .everyCommit:
            break
        case .lastCommitsMayBeLost, .none:
            // PostgreSQL never skips its own WAL flushes for one session; it can answer a commit
            // before the flush, which loses the last commits in a crash of the server, never
            // consistency.
            try connection.execute("SELECT set_config('synchronous_commit', 'off', false)")
        }
        return PostgresStorage(connection: connection, migrations: URL(fileURLWithPath: migrationsPath, isDirectory: true),
                               location: server.redacted)
    }
}

/// Why ``StorageFactory`` opened nothing.
public enum StorageFactoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No store at this location (a path, or a redacted URL), and the caller asked not to create one.
    case missing(String)
    /// This binary cannot open that kind of store; the text says why.
    case unsupported(String)
    /// The database server at this (redacted) location could not be reached or refused the
    /// connection; the second text is why, as the server or libpq said it.
    case unreachable(String, String)

    public var description: String {
        switch self {
        case .missing(let location): return "no database at \(location)"
        case .unsupported(let message): return message
        case .unreachable(let location, let reason): return "cannot connect to the database at \(location): \(reason)"
        }
    }
}
