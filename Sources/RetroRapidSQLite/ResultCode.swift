import CSQLite3

/// An SQLite result code (`SQLITE_*`), primary or extended, with names for the ones this code
/// checks and SQLite's own words for any. It keeps raw `Int32` codes inside this target: what
/// leaves it is a `ResultCode` (in ``DatabaseError``), compared by name.
///
/// An integer literal is one too, so `error.extendedCode == 2067` reads as the C code would.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public init(integerLiteral value: Int32) {
        self.init(rawValue: value)
    }

    /// The primary code an extended one refines: its low byte (`constraintUnique` → `constraint`).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// `2067 (UNIQUE constraint failed)`: the number and SQLite's text for it.
    public var description: String { "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))" }

    // Primary codes.
    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let auth = ResultCode(rawValue: SQLITE_AUTH)
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    public static let done = ResultCode(rawValue: SQLITE_DONE)

    // Extended codes are macros built with `|` and `<<`, which Swift does not import; these
    // copy their definitions from sqlite3.h.
    public static let constraintCheck = ResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    public static let constraintForeignKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    public static let constraintNotNull = ResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    public static let constraintPrimaryKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    public static let constraintDatatype = ResultCode(rawValue: SQLITE_CONSTRAINT | (12 << 8))
}
