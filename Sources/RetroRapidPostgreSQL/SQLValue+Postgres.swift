import RetroRapidSQL

/// How a bound value goes over the wire to PostgreSQL: text, integers, real numbers and
/// booleans as text (what libpq calls text format), bytes in binary format, so no value is
/// ever spliced into SQL.
extension SQLValue {
    /// The type the server is told for the parameter: int8 (so a function taking `integer`
    /// needs `$1::int`), bool, bytea, or "infer it from the statement" (0) for text, a real
    /// number and NULL, so a text value can fill a column of any type.
    var postgresTypeOID: UInt32 {
        switch self {
        case .integer: return 20
        case .boolean: return 16
        case .bytes: return 17
        case .null, .text, .real: return 0
        }
    }
}
