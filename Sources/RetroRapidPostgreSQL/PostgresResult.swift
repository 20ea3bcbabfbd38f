import CLibPQ

/// The rows a statement returned (text format), copied out of libpq's result so the result
/// can be freed at once. Cells are read by row and column number, like SQLite's statements.
public struct PostgresResult: Sendable {
    /// Each row's cells; nil for NULL.
    public let rows: [[String?]]
    /// Rows the statement inserted, updated or deleted (`PQcmdTuples`), 0 for a query.
    public let affectedRows: Int
    /// The columns' names, in the order of each row's cells.
    public let columnNames: [String]

    init(_ result: OpaquePointer) {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var cells: [String?] = []
            cells.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    cells.append(nil)
                } else {
                    cells.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(cells)
        }
        self.rows = rows
        columnNames = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        // libpq counts a SELECT's rows here too; a query changes none.
        let isQuery = String(cString: PQcmdStatus(result)).hasPrefix("SELECT")
        affectedRows = isQuery ? 0 : Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    public var isEmpty: Bool { rows.isEmpty }

    /// Each row as a ``PostgresRow``.
    public func map<T>(_ transform: (PostgresRow) throws -> T) rethrows -> [T] {
        try rows.map { try transform(PostgresRow(cells: $0)) }
    }

    /// The first row, if any.
    public var first: PostgresRow? { rows.first.map { PostgresRow(cells: $0) } }
}

/// One row of a ``PostgresResult``. The accessors trap on NULL or on text that is not of the
/// type asked for, like reading a column of the wrong type: the schema rules both out, so
/// meeting one is a bug, not bad input (use ``isNull(at:)`` or the optional accessors).
public struct PostgresRow: Sendable {
    public let cells: [String?]

    public func isNull(at column: Int) -> Bool { cells[column] == nil }

    public func string(at column: Int) -> String {
        guard let text = cells[column] else { preconditionFailure("column \(column) is NULL") }
        return text
    }

    public func optionalString(at column: Int) -> String? { cells[column] }

    public func int64(at column: Int) -> Int64 {
        guard let value = Int64(string(at: column)) else { preconditionFailure("column \(column) is not an integer: \(string(at: column))") }
        return value
    }

    public func int(at column: Int) -> Int { Int(int64(at: column)) }

    public func optionalInt64(at column: Int) -> Int64? { cells[column] == nil ? nil : int64(at: column) }

    /// A `boolean` column (`t`/`f`), or an integer one (non-zero is true).
    public func bool(at column: Int) -> Bool {
        let text = string(at: column)
        switch text {
        case "t", "true": return true
        case "f", "false": return false
        default: return int64(at: column) != 0
        }
    }

    /// A `bytea` column, which the server sends in hex (`\x0a1b…`).
    public func bytes(at column: Int) -> [UInt8] {
        let text = Array(string(at: column).utf8)
        precondition(text.count >= 2 && text[0] == UInt8(ascii: "\\") && text[1] == UInt8(ascii: "x") && text.count % 2 == 0,
                     "column \(column) is not bytea in hex")
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            bytes.append(Self.nibble(text[index]) << 4 | Self.nibble(text[index + 1]))
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: preconditionFailure("not a hex digit: \(digit)")
        }
    }
}
