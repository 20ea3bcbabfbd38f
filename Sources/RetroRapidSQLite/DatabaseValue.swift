import Foundation
import RetroRapidSQL

/// One SQLite value as read back, with SQLite's five storage classes. What is bound is any
/// `SQLBindable` (`Statement.bind`).
public enum DatabaseValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension DatabaseValue: SQLBindable {
    /// A value read from SQLite, bound again as it was (a blob as bytes).
    public var sqlValue: SQLValue {
        switch self {
        case .null: return .null
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .text(let text): return .text(text)
        case .blob(let bytes): return .bytes(bytes)
        }
    }
}
