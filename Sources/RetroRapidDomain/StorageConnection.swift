import Foundation

/// One open connection to the store, from `StorageFactory` (RetroRapidStorage): the
/// repositories over it and the operations the operator's commands need besides them
/// (migrations, a backup). A backend implements it once; nothing above it names a database.
///
/// Threading: a connection is used from one thread at a time (the server's storage thread, or
/// a command's main thread). It is deliberately not `Sendable`.
public protocol StorageConnection: AnyObject {
    /// Where the data lives, for messages: a file path (later a URL without its password).
    var location: String { get }

    /// A repository for each concept, over this connection.
    func repositories(_ settings: RepositorySettings) -> StorageRepositories

    /// Applies the pending schema migrations, in order, and returns those it applied (empty
    /// when up to date). The server runs it at start, every command before it works.
    @discardableResult
    func migrate() throws -> [AppliedMigration]

    /// The migrations applied so far, oldest first.
    func appliedMigrations() throws -> [AppliedMigration]

    /// The identifiers (`0002_name`) of the migrations ``migrate()`` would apply, in order.
    func pendingMigrations() throws -> [String]

    /// Copies the whole store, consistently (one snapshot, taken while others keep writing),
    /// to a new file at `path`, then reads the copy back as a restore would and says what it
    /// holds. `progress` gets the units copied so far and the total.
    func backup(to path: String, progress: (_ copied: Int, _ total: Int) -> Void) throws -> StorageBackup

    /// Group commit (docs/STORAGE.md, "Group commit"): runs `count` units of work in one
    /// transaction, in order, each in a savepoint of its own, and commits once. Returns each
    /// unit's own error (nil where its work is now committed): a unit that threw has only its
    /// own work undone. Throws, with nothing committed, when the transaction as a whole failed
    /// (its BEGIN or COMMIT, a lost connection, an error only a fresh transaction gets past);
    /// the caller then runs each unit alone. A repository's own transaction inside a unit is a
    /// savepoint, so whoever answers for a unit must wait for this to return.
    func commitGroup(_ count: Int, _ unit: (Int) throws -> Void) throws -> [(any Error)?]
}

/// What ``StorageConnection/backup(to:progress:)`` made.
public struct StorageBackup: Sendable, Equatable {
    /// Units copied (SQLite: pages).
    public let copiedUnits: Int
    /// The copy's own check of itself: empty when it is sound, else the first problems found.
    public let problems: [String]
    /// Rows per table in the copy, for the tables that have them, in a fixed order.
    public let rowCounts: [(table: String, rows: Int)]

    public init(copiedUnits: Int, problems: [String], rowCounts: [(table: String, rows: Int)]) {
        self.copiedUnits = copiedUnits
        self.problems = problems
        self.rowCounts = rowCounts
    }

    public static func == (lhs: StorageBackup, rhs: StorageBackup) -> Bool {
        lhs.copiedUnits == rhs.copiedUnits && lhs.problems == rhs.problems
            && lhs.rowCounts.map(\.table) == rhs.rowCounts.map(\.table) && lhs.rowCounts.map(\.rows) == rhs.rowCounts.map(\.rows)
    }
}
