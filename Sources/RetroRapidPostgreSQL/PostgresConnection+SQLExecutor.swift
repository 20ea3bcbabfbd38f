import RetroRapidSQL

/// The PostgreSQL backend's ``SQLExecutor``: the connection itself, whose statements are
/// already prepared once per connection and kept by SQL text. Rows come back as text and are
/// parsed, and checked, as each column is read (``SQLRow``).
extension PostgresConnection: SQLExecutor {
    public var dialect: SQLDialect { .postgresql }

    @discardableResult
    public func query(_ sql: String, _ binds: [any SQLBindable]) throws -> SQLResult {
        let result = try execute(sql, binds)
        let columns = SQLColumns(result.columnNames)
        let rows = result.rows.map { cells in
            SQLRow(columns: columns, values: cells.map { $0.map(SQLValue.text) ?? .null })
        }
        return SQLResult(rows: rows, affectedRows: result.affectedRows)
    }

    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(.readCommitted) { _ in try body() }
    }

    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(.repeatableRead) { _ in try body() }
    }

    public func constraint(violatedBy error: any Error) -> SQLConstraint? {
        guard let error = error as? PostgresError else { return nil }
        if error.isUniqueViolation { return .unique }
        return error.isForeignKeyViolation ? .foreignKey : nil
    }
}
