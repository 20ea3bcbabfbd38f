import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport

/// Opens storage from the configuration: the one place that picks a backend, used by `serve`
/// (the `DatabaseWorker`'s storage thread) and by every operator command.
///
/// Today the backend is SQLite, a file at `databasePath` with its schema from
/// `migrationsPath`. A second backend (a `--database-url` naming a server, say) is a target of
/// its own beside RetroRapidSQLite that implements ``StorageConnection``; this is where it is
/// chosen, and Tests/RetroRapidStorageTests runs the same contract tests against it.
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

    /// Opens the store the configuration names.
    public static func open(_ configuration: ServerConfiguration, ifMissing: Missing,
                            durability: Durability = .everyCommit) throws -> any StorageConnection {
        try openSQLite(path: configuration.databasePath, migrationsPath: configuration.migrationsPath,
                       ifMissing: ifMissing, durability: durability)
    }

    /// Opens a store at `path` with the schema from `migrationsPath` (`migrate`, benchmarks
    /// and tools that make stores of their own).
    public static func open(path: String, migrationsPath: String, ifMissing: Missing,
                            durability: Durability = .everyCommit) throws -> any StorageConnection {
        try openSQLite(path: path, migrationsPath: migrationsPath, ifMissing: ifMissing, durability: durability)
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
}

/// Why ``StorageFactory`` opened nothing.
public enum StorageFactoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No store at this location, and the caller asked not to create one.
    case missing(String)

    public var description: String {
        switch self {
        case .missing(let location): return "no database at \(location)"
        }
    }
}
