import CSQLite3
import RetroRapidSQL

/// One compiled SQL statement, finalized when the last reference goes.
///
/// Parameter indexes start at 1 and column indexes at 0, as in SQLite. Text and blobs are bound
/// with their real byte length and `SQLITE_TRANSIENT` (SQLite copies them during the call), so
/// embedded NUL bytes survive and no Swift buffer has to outlive the call. Integers are bound as
/// 64-bit. Like its ``Database``, a statement is used from one thread at a time.
public final class Statement {
    /// The connection stays open while any of its statements exists.
    public let database: Database
    let handle: OpaquePointer

    init(database: Database, handle: OpaquePointer) {
        self.database = database
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The SQL as written, with placeholders: safe to log, unlike the expanded SQL.
    public var sql: String { String(cString: sqlite3_sql(handle)) }

    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// True when running it writes nothing (a SELECT): its run changes no rows.
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    public func columnName(at index: Int) -> String {
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    // MARK: - Binding

    /// Binds `value` to the parameter at `index` (1-based).
    public func bind(_ value: any SQLBindable, at index: Int) throws {
        let position = Int32(index)
        let result: Int32
        switch value.sqlValue {
        case .null:
            result = sqlite3_bind_null(handle, position)
        case .integer(let integer):
            try bindInteger(integer, at: index)
            return
        case .real(let real):
            result = sqlite3_bind_double(handle, position, real)
        case .text(let text):
            try bindText(text, at: index)
            return
        case .boolean(let bool):
            // SQLite has no boolean: 0 and 1, as its own TRUE and FALSE are.
            try bindInteger(bool ? 1 : 0, at: index)
            return
        case .bytes(let bytes):
            result = bytes.withUnsafeBytes { buffer in
                // A NULL pointer would bind NULL, not the empty blob.
                guard let start = buffer.baseAddress, !buffer.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, position, 0)
                }
                return sqlite3_bind_blob64(handle, position, start, UInt64(buffer.count), rr_sqlite_transient())
            }
        }
        guard result == SQLITE_OK else {
            throw DatabaseError(connection: database.handle, code: result, sql: sql)
        }
    }

    /// Binds an integer to the parameter at `index` (1-based): `bind(_:at:)` without the
    /// existential and the `SQLValue` in between, for a statement run once a row.
    public func bindInteger(_ value: Int64, at index: Int) throws {
        let result = sqlite3_bind_int64(handle, Int32(index), value)
        guard result == SQLITE_OK else { throw DatabaseError(connection: database.handle, code: result, sql: sql) }
    }

    /// Binds the UTF-8 text in `bytes` to the parameter at `index` (1-based) **without a copy**:
    /// SQLite reads the bytes where they are when the statement runs, so they must stay valid
    /// and unchanged until it has run and its bindings are cleared or replaced
    /// (``clearBindings()``). For a hot loop that owns one buffer of many texts.
    public func bindTextInPlace(_ bytes: UnsafeRawBufferPointer, at index: Int) throws {
        let position = Int32(index)
        let result: Int32
        if let start = bytes.baseAddress {
            result = sqlite3_bind_text64(handle, position, start.assumingMemoryBound(to: CChar.self), UInt64(bytes.count),
                                         rr_sqlite_static(), UInt8(SQLITE_UTF8))
        } else {
            // A NULL pointer would bind NULL, not the empty string.
            result = sqlite3_bind_text(handle, position, "", 0, rr_sqlite_transient())
        }
        guard result == SQLITE_OK else { throw DatabaseError(connection: database.handle, code: result, sql: sql) }
    }

    /// Binds a text to the parameter at `index` (1-based), copied by SQLite during the call.
    public func bindText(_ value: String, at index: Int) throws {
        var text = value
        let position = Int32(index)
        let result = text.withUTF8 { bytes in
            // A NULL pointer would bind NULL, not the empty string.
            guard let start = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, position, "", 0, rr_sqlite_transient())
            }
            return start.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(handle, position, $0, UInt64(bytes.count), rr_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
        guard result == SQLITE_OK else { throw DatabaseError(connection: database.handle, code: result, sql: sql) }
    }

    /// Binds `value` to the parameter written `name` in the SQL, prefix included (`:id`).
    public func bind(_ value: any SQLBindable, named name: String) throws {
        let index = sqlite3_bind_parameter_index(handle, name)
        guard index > 0 else {
            throw DatabaseError(extendedCode: .range, message: "no parameter named \(name)", sql: sql)
        }
        try bind(value, at: Int(index))
    }

    /// Replaces every binding with `values`, in order. Their count must match the statement's
    /// parameters: a missing value would otherwise silently be NULL.
    public func bind(_ values: [any SQLBindable]) throws {
        guard values.count == parameterCount else {
            throw DatabaseError(
                extendedCode: .range,
                message: "statement has \(parameterCount) parameters but \(values.count) values were given",
                sql: sql
            )
        }
        // Every parameter is bound anew, so none needs clearing first (sqlite3_clear_bindings
        // was about a fifth of binding a statement: docs/BENCHMARKS.md, "Cost per frame").
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Replaces every binding with `values`, keyed by parameter name with its prefix (`:id`).
    public func bind(named values: [String: any SQLBindable]) throws {
        clearBindings()
        for (name, value) in values {
            try bind(value, named: name)
        }
    }

    // MARK: - Running

    /// Runs the statement to its next row: true when a row is available to read.
    @discardableResult
    public func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let failure: throw DatabaseError(connection: database.handle, code: failure, sql: sql)
        }
    }

    /// Rewinds to before the first row, keeping the bindings, and releases the statement's
    /// read snapshot (under WAL an un-reset statement holds one, which stalls checkpoints).
    /// It reports nothing: `step()` already threw any error of the last run.
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows (INSERT, UPDATE, DELETE) with its current bindings.
    public func execute() throws {
        reset()
        defer { reset() }
        while try step() {}
    }

    /// Binds `values`, then runs like ``execute()``.
    public func execute(_ values: [any SQLBindable]) throws {
        try bind(values)
        try execute()
    }

    /// Runs with the current bindings and maps every row; the statement is reset afterwards.
    public func query<Row>(_ row: (Statement) throws -> Row) throws -> [Row] {
        reset()
        defer { reset() }
        var rows: [Row] = []
        while try step() {
            rows.append(try row(self))
        }
        return rows
    }

    /// Binds `values`, then runs like ``query(_:)``.
    public func query<Row>(_ values: [any SQLBindable], _ row: (Statement) throws -> Row) throws -> [Row] {
        try bind(values)
        return try query(row)
    }

    // MARK: - Reading the current row (column indexes start at 0)

    /// NULL reads as 0, 0.0, "" or [] through the typed getters; check here when it matters.
    public func isNull(at column: Int) -> Bool {
        sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL
    }

    public func int64(at column: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(column))
    }

    public func int(at column: Int) -> Int {
        Int(sqlite3_column_int64(handle, Int32(column)))
    }

    public func double(at column: Int) -> Double {
        sqlite3_column_double(handle, Int32(column))
    }

    public func bool(at column: Int) -> Bool {
        sqlite3_column_int64(handle, Int32(column)) != 0
    }

    /// The text by its byte length, so an embedded NUL does not cut it short.
    public func string(at column: Int) -> String {
        // The pointer first, then the length: that order is what SQLite documents.
        guard let start = sqlite3_column_text(handle, Int32(column)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    public func blob(at column: Int) -> [UInt8] {
        guard let start = sqlite3_column_blob(handle, Int32(column)) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    }

    /// The column with the storage class SQLite holds it in.
    public func value(at column: Int) -> DatabaseValue {
        switch sqlite3_column_type(handle, Int32(column)) {
        case SQLITE_INTEGER: return .integer(int64(at: column))
        case SQLITE_FLOAT: return .real(double(at: column))
        case SQLITE_TEXT: return .text(string(at: column))
        case SQLITE_BLOB: return .blob(blob(at: column))
        default: return .null
        }
    }
}
