/// One value bound to a `$n` parameter of a statement, whichever backend runs it. Each backend
/// turns it into its own (SQLite stores a boolean as 0 or 1; PostgreSQL sends bytes in binary
/// format), so no value is ever spliced into SQL.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case boolean(Bool)
    case bytes([UInt8])
}

/// A Swift value that can be bound to a statement parameter. Only the types the repositories
/// need conform; every integer goes through `Int64`, so nothing is truncated.
public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLBindable {
    public var sqlValue: SQLValue { self }
}

extension Int: SQLBindable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLBindable {
    public var sqlValue: SQLValue { .integer(self) }
}

extension Double: SQLBindable {
    public var sqlValue: SQLValue { .real(self) }
}

extension String: SQLBindable {
    public var sqlValue: SQLValue { .text(self) }
}

extension Bool: SQLBindable {
    public var sqlValue: SQLValue { .boolean(self) }
}

extension Array: SQLBindable where Element == UInt8 {
    public var sqlValue: SQLValue { .bytes(self) }
}

/// `nil` binds NULL.
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
