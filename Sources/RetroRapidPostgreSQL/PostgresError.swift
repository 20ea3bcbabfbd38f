/// A failure reported by PostgreSQL or libpq: a statement the server refused, or a
/// connection that could not be made or was lost.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE (`23505` unique violation, `40001` serialization failure…);
    /// empty for a failure of the connection itself, which has none.
    public let sqlState: String
    /// The server's (or libpq's) primary message.
    public let message: String
    /// The constraint at fault, for integrity violations.
    public let constraint: String?
    /// The statement that failed, when there was one.
    public let sql: String?

    public init(sqlState: String, message: String, constraint: String? = nil, sql: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
        self.sql = sql
    }

    public var description: String {
        let state = sqlState.isEmpty ? "" : " (SQLSTATE \(sqlState))"
        return "PostgreSQL: \(message)\(state)" + (sql.map { " in: \($0.prefix(200))" } ?? "")
    }

    public var isUniqueViolation: Bool { sqlState == "23505" }
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    public var isCheckViolation: Bool { sqlState == "23514" }
    public var isNotNullViolation: Bool { sqlState == "23502" }
    public var isConstraintViolation: Bool { sqlState.hasPrefix("23") }
    /// The transaction lost a race under its isolation level, or to a deadlock: running it
    /// again from the start is the documented remedy (``PostgresConnection/transaction(_:_:)``).
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// No usable connection: the server is down, restarting, or unreachable.
    public var isConnectionFailure: Bool { sqlState.isEmpty || sqlState.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P03" }

    static func misuse(_ message: String) -> PostgresError {
        PostgresError(sqlState: "RRMIS", message: "misuse: \(message)")
    }
}
