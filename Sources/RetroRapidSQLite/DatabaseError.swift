import CSQLite3

/// A failed SQLite call: what SQLite said, and which SQL it was running.
///
/// It carries the SQL text with its `?`/`:name` placeholders, never the values bound to them:
/// bound values are player data and secrets (token hashes, codes) and errors end up in logs.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    /// The extended result code, e.g. 2067 (`Self.constraintUnique`).
    public let extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`), e.g. "UNIQUE constraint failed: players.public_id".
    public let message: String
    /// The statement or script that failed, as written (placeholders, no values); nil when the
    /// failure was not running SQL (opening a file, a backup step).
    public let sql: String?

    public init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code, e.g. 19 (`SQLITE_CONSTRAINT`): the low byte of the extended one.
    public var primaryCode: Int32 { extendedCode & 0xFF }

    public var description: String {
        var text = "SQLite error \(extendedCode) (\(String(cString: sqlite3_errstr(extendedCode)))): \(message)"
        if let sql { text += " — SQL: \(sql)" }
        return text
    }

    /// Any constraint failure: unique, foreign key, check, not null, primary key, STRICT type.
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }
    /// A UNIQUE constraint or a non-integer PRIMARY KEY already holds this value.
    public var isUniqueViolation: Bool {
        extendedCode == Self.constraintUnique || extendedCode == Self.constraintPrimaryKey
    }
    public var isForeignKeyViolation: Bool { extendedCode == Self.constraintForeignKey }
    public var isCheckViolation: Bool { extendedCode == Self.constraintCheck }
    public var isNotNullViolation: Bool { extendedCode == Self.constraintNotNull }
    /// Another connection holds the lock this one needed for longer than the busy timeout
    /// (`SQLITE_BUSY*`), or a table is locked (`SQLITE_LOCKED*`). Retrying later can succeed.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
}

extension DatabaseError {
    /// Reads the connection's last error right after the failing call, before anything else
    /// can overwrite it.
    init(connection: OpaquePointer?, code: Int32? = nil, sql: String?) {
        let extendedCode = code ?? (connection.map { sqlite3_extended_errcode($0) } ?? SQLITE_ERROR)
        let message = connection.map { String(cString: sqlite3_errmsg($0)) }
            ?? String(cString: sqlite3_errstr(extendedCode))
        self.init(extendedCode: extendedCode, message: message, sql: sql)
    }

    // Extended codes are macros built with `|` and `<<`, which Swift does not import; these
    // copy their definitions from sqlite3.h.
    static let constraintCheck = SQLITE_CONSTRAINT | (1 << 8)
    static let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)
    static let constraintNotNull = SQLITE_CONSTRAINT | (5 << 8)
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// Our own refusal of a call SQLite would accept or answer confusingly (a nested
    /// transaction, two statements given to `prepare`).
    static func misuse(_ message: String, sql: String? = nil) -> DatabaseError {
        DatabaseError(extendedCode: SQLITE_MISUSE, message: message, sql: sql)
    }
}
