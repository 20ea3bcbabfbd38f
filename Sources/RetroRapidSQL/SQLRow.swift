import RetroRapidDomain

/// What a statement answered: its rows, and how many rows it inserted, updated or deleted.
public struct SQLResult: Sendable {
    public let rows: [SQLRow]
    /// Rows the statement inserted, updated or deleted; 0 for a query.
    public let affectedRows: Int

    public init(rows: [SQLRow], affectedRows: Int) {
        self.rows = rows
        self.affectedRows = affectedRows
    }

    public var first: SQLRow? { rows.first }
    public var isEmpty: Bool { rows.isEmpty }
}

/// The column names of one statement's rows, shared by all of them.
public final class SQLColumns: Sendable {
    public let names: [String]

    public init(_ names: [String]) {
        self.names = names
    }

    /// The position of `name`: the first column so named, as SQL itself would pick.
    func index(of name: String) -> Int? { names.firstIndex(of: name) }
}

/// One row, read by column name, so a reader never counts positions in a SELECT list.
///
/// What the database holds is checked, not trusted: a value that is not of the type asked for
/// (text where a number belongs, a number that does not fit, NULL where none may be), or a
/// column the statement did not select, is `StoreError.unreadable` naming the column, never a
/// trap. SQLite hands back typed values; PostgreSQL (text format) text, which is parsed here.
public struct SQLRow: Sendable {
    public let columns: SQLColumns
    public let values: [SQLValue]

    public init(columns: SQLColumns, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value in column `name`, as the backend gave it.
    public func value(_ name: String) throws -> SQLValue {
        guard let index = columns.index(of: name), index < values.count else {
            throw StoreError.unreadable("the statement has no column '\(name)' (it has \(columns.names.joined(separator: ", ")))")
        }
        return values[index]
    }

    public func isNull(_ name: String) throws -> Bool { try value(name) == .null }

    public func int64(_ name: String) throws -> Int64 {
        let value = try value(name)
        switch value {
        case .integer(let integer): return integer
        case .text(let text): if let integer = Int64(text) { return integer }
        default: break
        }
        throw unreadable(name, value, "an integer")
    }

    public func optionalInt64(_ name: String) throws -> Int64? {
        try isNull(name) ? nil : int64(name)
    }

    /// An `Int64` column read as `Int` (the same width on the 64-bit machines we run on).
    public func int(_ name: String) throws -> Int { Int(try int64(name)) }

    public func string(_ name: String) throws -> String {
        let value = try value(name)
        guard case .text(let text) = value else { throw unreadable(name, value, "text") }
        return text
    }

    public func optionalString(_ name: String) throws -> String? {
        try isNull(name) ? nil : string(name)
    }

    /// SQLite's 0 and 1, PostgreSQL's `t` and `f`.
    public func bool(_ name: String) throws -> Bool {
        let value = try value(name)
        switch value {
        case .boolean(let bool): return bool
        case .integer(0), .text("f"): return false
        case .integer(1), .text("t"): return true
        default: throw unreadable(name, value, "a boolean")
        }
    }

    private func unreadable(_ name: String, _ value: SQLValue, _ expected: String) -> StoreError {
        let found: String
        switch value {
        case .null: found = "NULL"
        case .integer(let integer): found = "the integer \(integer)"
        case .real(let real): found = "the number \(real)"
        case .text(let text): found = "'\(text.prefix(40))'"
        case .boolean(let bool): found = "\(bool)"
        case .bytes(let bytes): found = "\(bytes.count) bytes"
        }
        return StoreError.unreadable("column '\(name)' holds \(found), not \(expected)")
    }
}
