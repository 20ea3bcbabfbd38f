import CSQLite3

/// A failed SQLite call: what SQLite said, and which SQL it was running.
///
/// It carries the SQL text with its `?`/`:name` placeholders, never the values bound to them:
/// bound values are player data and secrets (token hashes, codes) and errors end up in logs.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    /// The extended result code, e.g. 2067 (``ResultCode/constraintUnique``).
    public let extendedCode: ResultCode
    /// SQLite's message (`sqlite3_errmsg`), e.g. "UNIQUE constraint failed: players.public_id".
    public let message: String
    /// The statement or script that failed, as written (placeholders, no values); nil when the
    /// failure was not running SQL (opening a file, a backup step).
    public let sql: String?

    public init(extendedCode: ResultCode, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code, e.g. 19 (``ResultCode/constraint``): the low byte of the extended one.
    public var primaryCode: ResultCode { extendedCode.primary }

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += " — SQL: \(sql)" }
        return text
    }

    /// Any constraint failure: unique, foreign key, check, not null, primary key, STRICT type.
    public var isConstraintViolation: Bool { primaryCode == .constraint }
    /// A UNIQUE constraint or a non-integer PRIMARY KEY already holds this value.
    public var isUniqueViolation: Bool {
        extendedCode == .constraintUnique || extendedCode == .constraintPrimaryKey
    }
    public var isForeignKeyViolation: Bool { extendedCode == .constraintForeignKey }
    public var isCheckViolation: Bool { extendedCode == .constraintCheck }
    public var isNotNullViolation: Bool { extendedCode == .constraintNotNull }
    /// Another connection holds the lock this one needed for longer than the busy timeout
    /// (`SQLITE_BUSY*`), or a table is locked (`SQLITE_LOCKED*`). Retrying later can succeed.
    public var isBusy: Bool { primaryCode == .busy || primaryCode == .locked }
}

extension DatabaseError {
    /// Reads the connection's last error right after the failing call, before anything else
    /// can overwrite it.
    init(connection: OpaquePointer?, code: Int32? = nil, sql: String?) {
        let extendedCode = code ?? (connection.map { sqlite3_extended_errcode($0) } ?? SQLITE_ERROR)
        let message = connection.map { String(cString: sqlite3_errmsg($0)) }
            ?? String(cString: sqlite3_errstr(extendedCode))
        self.init(extendedCode: ResultCode(rawValue: extendedCode), message: message, sql: sql)
    }

    /// Our own refusal of a call SQLite would accept or answer confusingly (a nested
    /// transaction, two statements given to `prepare`).
    static func misuse(_ message: String, sql: String? = nil) -> DatabaseError {
        DatabaseError(extendedCode: .misuse, message: message, sql: sql)
    }
}
