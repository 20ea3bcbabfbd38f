/// A value bound to a `$n` parameter of a PostgreSQL statement.
///
/// Text, integers and booleans go over the wire as text (what libpq calls text format) and
/// bytes in binary format, so no value is ever spliced into SQL.
public enum PostgresValue: Sendable, Hashable {
    case null
    case text(String)
    case integer(Int64)
    case boolean(Bool)
    case bytes([UInt8])

    /// The type the server is told for the parameter: int8 (so a function taking `integer`
    /// needs `$1::int`), bool, bytea, or "infer it from the
    /// statement" (0) for text and NULL, so a text value can fill a column of any type.
    var typeOID: UInt32 {
        switch self {
        case .integer: return 20
        case .boolean: return 16
        case .bytes: return 17
        case .null, .text: return 0
        }
    }
}

/// Anything that can be bound as a statement parameter.
public protocol PostgresBindable {
    var postgresValue: PostgresValue { get }
}

extension PostgresValue: PostgresBindable {
    public var postgresValue: PostgresValue { self }
}

extension Int: PostgresBindable {
    public var postgresValue: PostgresValue { .integer(Int64(self)) }
}

extension Int64: PostgresBindable {
    public var postgresValue: PostgresValue { .integer(self) }
}

extension String: PostgresBindable {
    public var postgresValue: PostgresValue { .text(self) }
}

extension Bool: PostgresBindable {
    public var postgresValue: PostgresValue { .boolean(self) }
}

extension Array: PostgresBindable where Element == UInt8 {
    public var postgresValue: PostgresValue { .bytes(self) }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}
