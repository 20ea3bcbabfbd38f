import CSQLite3
import RetroRapidSQL

/// The SQLite backend's ``SQLExecutor``: a ``Database`` and its one cache of compiled
/// statements, kept by SQL text and reused (compiling costs more than running most of the
/// repositories' statements). `SQLiteStorage` makes one per connection and hands it to every
/// repository. The cache lives here rather than in `Database` because a statement keeps its
/// connection alive: a connection holding its own statements would never close.
///
/// Threading rule: as its ``Database``, one thread at a time (the storage thread).
public final class SQLiteExecutor: SQLExecutor {
    public let database: Database
    private var cache: [String: CachedStatement] = [:]

    public init(database: Database) {
        self.database = database
    }

    public var dialect: SQLDialect { .sqlite }

    /// The statement for `sql`, compiled on first use: for code that binds and reads a
    /// statement itself (SQLite's `?` placeholders, or `$n` as in ``query(_:_:)``).
    public func prepare(_ sql: String) throws -> Statement {
        try cached(sql).statement
    }

    @discardableResult
    public func query(_ sql: String, _ binds: [any SQLBindable]) throws -> SQLResult {
        let entry = try cached(sql)
        let statement = entry.statement
        try statement.bind(binds)
        let rows = try statement.query { row in
            SQLRow(columns: entry.columns, values: (0..<entry.columns.names.count).map { row.value(at: $0).sqlValue })
        }
        return SQLResult(rows: rows, affectedRows: statement.isReadOnly ? 0 : database.changes)
    }

    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try database.transaction(.immediate) { _ in try body() }
    }

    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try database.transaction(.deferred) { _ in try body() }
    }

    public func constraint(violatedBy error: any Error) -> SQLConstraint? {
        guard let error = error as? DatabaseError else { return nil }
        if error.isUniqueViolation { return .unique }
        return error.isForeignKeyViolation ? .foreignKey : nil
    }

    /// A compiled statement and its column names, looked up once.
    private struct CachedStatement {
        let statement: Statement
        let columns: SQLColumns
    }

    /// The cache entry for `sql`, compiled with its `$n` placeholders rewritten for SQLite
    /// when it is not there yet.
    private func cached(_ sql: String) throws -> CachedStatement {
        if let entry = cache[sql] { return entry }
        let statement = try database.prepare(dialect.placeholders(sql))
        let entry = CachedStatement(statement: statement,
                                    columns: SQLColumns((0..<statement.columnCount).map(statement.columnName(at:))))
        cache[sql] = entry
        return entry
    }
}
