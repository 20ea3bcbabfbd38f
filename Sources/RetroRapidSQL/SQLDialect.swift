import Foundation

/// What differs between the SQL the two backends speak, for the statements written once
/// (docs/STORAGE.md, "One SQL layer"). Statements are written in PostgreSQL's form, with
/// `$1, $2…` placeholders; the rest of the difference is named here, never spelled out in a
/// repository.
public enum SQLDialect: Sendable {
    case sqlite
    case postgresql

    /// What follows a SELECT that must lock the rows it read until the transaction ends.
    /// SQLite has no row locks: its writers run in IMMEDIATE transactions, which take the
    /// database's one write lock before they read, so the read is already safe.
    public var lockingRead: String {
        switch self {
        case .sqlite: return ""
        case .postgresql: return " FOR UPDATE"
        }
    }

    /// ``lockingRead`` of one table of a join, by its name or alias (PostgreSQL refuses to lock
    /// the nullable side of an outer join, so a query joining one names the table it locks).
    public func lockingRead(of table: String) -> String {
        switch self {
        case .sqlite: return ""
        case .postgresql: return " FOR UPDATE OF \(table)"
        }
    }

    /// ``lockingRead`` for a row others only point at (a player): PostgreSQL's
    /// `FOR NO KEY UPDATE`, so lockers still queue behind each other but a row that merely
    /// references it (a game being recorded, checked by its foreign key) does not wait.
    public var lockingReadKeepingKey: String {
        switch self {
        case .sqlite: return ""
        case .postgresql: return " FOR NO KEY UPDATE"
        }
    }

    /// An inner join that keeps the table on its left the outer loop: SQLite's `CROSS JOIN`,
    /// which its planner never reorders (so a ranking query walks its index and looks players
    /// up by id); PostgreSQL's plain `JOIN`, whose planner picks that plan itself and refuses
    /// `ON` after `CROSS JOIN`.
    public var joinKeepingOrder: String {
        switch self {
        case .sqlite: return "CROSS JOIN"
        case .postgresql: return "JOIN"
        }
    }

    /// The larger of two values: SQLite's two-argument `max`, PostgreSQL's `GREATEST`.
    public func greatest(_ first: String, _ second: String) -> String {
        switch self {
        case .sqlite: return "max(\(first), \(second))"
        case .postgresql: return "GREATEST(\(first), \(second))"
        }
    }

    /// A condition that `column` is one of the texts bound, as one value (``textList(_:)``),
    /// to `placeholder`: SQLite reads them as a JSON array (`json_each`), PostgreSQL as a
    /// `text[]`. One parameter however many values, so one statement is prepared for any count.
    public func isOneOf(_ column: String, textListAt placeholder: String) -> String {
        switch self {
        case .sqlite: return "\(column) IN (SELECT value FROM json_each(\(placeholder)))"
        case .postgresql: return "\(column) = ANY (\(placeholder)::text[])"
        }
    }

    /// `values` as the one parameter ``isOneOf(_:textListAt:)`` reads: a JSON array for SQLite,
    /// an array literal for PostgreSQL (each value quoted, its `\\` and `"` escaped).
    public func textList(_ values: [String]) -> SQLValue {
        switch self {
        case .sqlite:
            return .text("[" + values.map { "\"" + Self.jsonEscaped($0) + "\"" }.joined(separator: ",") + "]")
        case .postgresql:
            return .text(Self.postgresArray(values))
        }
    }

    /// A PostgreSQL array literal of `values` (`{"a","b"}`), bound as one text parameter and
    /// cast in the SQL (`$1::text[]`, `$1::bigint[]`). Each element is quoted, with `"` and `\`
    /// escaped, so any text (a move list holds commas) stays one element.
    public static func postgresArray(_ values: [String]) -> String {
        // Written byte by byte: a compaction binds thousands of game ids at once.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(values.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A JSON string's content: `\\`, `"` and the control characters escaped (RFC 8259).
    private static func jsonEscaped(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `sql` with its placeholders as this dialect numbers them. SQLite reads `$1` as a
    /// parameter *named* "$1", numbered by where it first appears, so `$2 … $1` would bind
    /// the wrong way round; `?1` binds by number, as PostgreSQL's `$1` does. A `$` inside a
    /// quoted literal, a quoted name or a comment is left alone.
    public func placeholders(_ sql: String) -> String {
        guard self == .sqlite else { return sql }
        var out: [UInt8] = []
        out.reserveCapacity(sql.utf8.count)
        let bytes = Array(sql.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // Copied to its closing quote; a doubled quote inside is one character.
                let end = Self.quoteEnd(bytes, from: index, quote: byte)
                out.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                out.append(contentsOf: bytes[index..<end])
                index = end
            case UInt8(ascii: "$") where index + 1 < bytes.count && Self.isDigit(bytes[index + 1]):
                out.append(UInt8(ascii: "?"))
                index += 1
            default:
                out.append(byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The index just past the quote that closes the one at `start` (the end if none does).
    private static func quoteEnd(_ bytes: [UInt8], from start: Int, quote: UInt8) -> Int {
        var index = start + 1
        while index < bytes.count {
            if bytes[index] == quote {
                if index + 1 < bytes.count && bytes[index + 1] == quote { index += 2; continue }
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }
}
