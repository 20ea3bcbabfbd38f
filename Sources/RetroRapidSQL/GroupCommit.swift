/// What group commit needs of a SQL connection (docs/STORAGE.md, "Group commit"): a way to run
/// a statement with no result, and the state of the transaction the group runs in. Each backend's
/// connection conforms (`Database`, `PostgresConnection`).
public protocol GroupCommitConnection: AnyObject {
    /// Runs one statement with no result (BEGIN, SAVEPOINT, RELEASE, COMMIT).
    func executeGroupStatement(_ sql: String) throws
    /// The group's transaction is still there (perhaps failed: then only a rollback to a
    /// savepoint or of the whole of it is possible).
    var groupTransactionExists: Bool { get }
    /// The group's transaction is there and has not failed: more work and a commit are possible.
    var groupTransactionIsUsable: Bool { get }
    /// True for a unit's error after which the group must not commit even though its
    /// savepoint was undone (PostgreSQL: a serialization failure or deadlock, whose cure is a
    /// fresh snapshot the group cannot have; a lost connection).
    func errorSpoilsGroup(_ error: any Error) -> Bool
    /// The error for a group whose transaction was lost: nothing was committed.
    func groupTransactionLost() -> any Error
    /// Rolls the group's transaction back if one is open; the error being thrown is the one
    /// that matters.
    func rollBackGroup()
}

/// Group commit, written once for every SQL backend: `run` does `count` units of work in one
/// transaction, each in a savepoint of its own, and commits once. A unit that throws has only
/// its own work rolled back, and its error is its entry in the answer (nil for the units that
/// succeeded); a transaction a unit opens is a nested savepoint (`savepoint`).
///
/// `run` throws, with nothing committed, when BEGIN or COMMIT fails, the transaction was lost
/// or failed as a whole, a savepoint could not be undone or released, or a unit's error spoils
/// the group (`GroupCommitConnection.errorSpoilsGroup`): the caller then runs each unit alone.
/// Units run in order, so each sees the work of those before it, as if run one by one.
///
/// Threading rule: one per connection, used on the thread that owns the connection.
public final class GroupCommit {
    /// True while `run` runs its units: a transaction asked for now is a savepoint.
    public private(set) var isRunning = false
    /// The group must not commit.
    private var spoilt = false
    /// Savepoints open inside the group, to name the next one.
    private var depth = 0

    public init() {}

    /// Runs the units between `begin` and `commit` on `connection`. The caller has checked
    /// that no transaction is open.
    public func run(_ count: Int, on connection: some GroupCommitConnection, begin: String, commit: String,
                    _ unit: (Int) throws -> Void) throws -> [(any Error)?] {
        try connection.executeGroupStatement(begin)
        isRunning = true
        spoilt = false
        defer { isRunning = false }
        var errors: [(any Error)?] = []
        errors.reserveCapacity(count)
        do {
            for index in 0..<count {
                do {
                    try savepoint(on: connection) { try unit(index) }
                    errors.append(nil)
                } catch {
                    // Only the unit's own work went, unless the whole transaction did (or a
                    // savepoint could not be undone or released: the unit's work might stay).
                    guard !spoilt, connection.groupTransactionIsUsable else { throw error }
                    errors.append(error)
                }
            }
            // A failed transaction's COMMIT would "succeed" as a rollback: never take it for one.
            guard connection.groupTransactionIsUsable else { throw connection.groupTransactionLost() }
            try connection.executeGroupStatement(commit)
        } catch {
            connection.rollBackGroup()
            throw error
        }
        return errors
    }

    /// `body` in a savepoint of the group's transaction: released when it returns, rolled back
    /// to (and released) when it throws, so the group carries on without its work.
    public func savepoint<T>(on connection: some GroupCommitConnection, _ body: () throws -> T) throws -> T {
        guard !spoilt, connection.groupTransactionIsUsable else { throw connection.groupTransactionLost() }
        depth += 1
        defer { depth -= 1 }
        let name = "rr_unit\(depth)"
        try connection.executeGroupStatement("SAVEPOINT \(name)")
        let value: T
        do {
            value = try body()
        } catch {
            if connection.errorSpoilsGroup(error) { spoilt = true }
            if connection.groupTransactionExists {
                do {
                    try connection.executeGroupStatement("ROLLBACK TO SAVEPOINT \(name)")
                    try connection.executeGroupStatement("RELEASE SAVEPOINT \(name)")
                } catch {
                    spoilt = true
                }
            }
            throw error
        }
        guard !spoilt, connection.groupTransactionIsUsable else { throw connection.groupTransactionLost() }
        do {
            try connection.executeGroupStatement("RELEASE SAVEPOINT \(name)")
        } catch {
            spoilt = true
            throw error
        }
        return value
    }

    /// Something outside a unit's savepoint broke the group (a lost connection, a transaction
    /// the group cannot give): it must not commit.
    public func spoil() {
        spoilt = true
    }
}
