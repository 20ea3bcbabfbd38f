/// A SQL connection as the repositories written once see it (docs/STORAGE.md, "One SQL
/// layer"): run a statement with its values, run work in a transaction that writes, and say
/// which dialect it speaks. Each backend conforms once (`SQLiteExecutor`, `PostgresConnection`)
/// and keeps what truly differs: how a transaction opens, how rows are locked, the dialect.
///
/// Threading rule: as the connection underneath, one thread at a time (a storage thread or a
/// command's main thread).
public protocol SQLExecutor: AnyObject {
    var dialect: SQLDialect { get }

    /// Runs one statement, written with `$1, $2…` placeholders, with `binds` in that order, and
    /// returns every row it produced. The statement is compiled once per connection and kept.
    @discardableResult
    func query(_ sql: String, _ binds: [any SQLBindable]) throws -> SQLResult

    /// Runs `body` in one transaction that will write, and commits it; rolls back and rethrows
    /// when it throws. SQLite: IMMEDIATE (the write lock taken before the first read).
    /// PostgreSQL: READ COMMITTED, the whole body run again on a serialization failure or a
    /// deadlock, so it must only read and write through this executor. Inside a group commit
    /// it is a savepoint of the group's transaction.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T

    /// Runs `body` in one transaction that only reads, so its statements see one snapshot.
    /// SQLite: DEFERRED. PostgreSQL: REPEATABLE READ. Inside a group commit it is a savepoint.
    func readTransaction<T>(_ body: () throws -> T) throws -> T

    /// The constraint `error` (thrown by this executor) says a statement broke, if it says one:
    /// how a repository tells "someone else got there first" from a real failure, whichever
    /// backend's error it is.
    func constraint(violatedBy error: any Error) -> SQLConstraint?
}

/// A kind of constraint a statement can break.
public enum SQLConstraint: Sendable, Equatable {
    case unique
    case foreignKey
}
