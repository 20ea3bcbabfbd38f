import Foundation

/// One numbered SQL file of a backend's migrations folder, named `NNNN_snake_name.sql`.
public struct Migration: Sendable, Equatable {
    /// The four-digit number, from 1 without gaps.
    public let version: Int
    /// The snake name after the number, e.g. `initial`.
    public let name: String
    /// The file's text.
    public let sql: String
    /// SHA-256 hex of the file's bytes, recorded when applied so an edit is noticed.
    public let checksum: String

    public init(version: Int, name: String, sql: String, checksum: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = checksum
    }

    /// `0001_initial`: how people and messages name it.
    public var identifier: String { Migration.identifier(version: version, name: name) }

    static func identifier(version: Int, name: String) -> String {
        AppliedMigration.identifier(version: version, name: name)
    }
}

/// Why a migrator refused to run or stopped, whatever the backend. Matched by `code`; new
/// codes break no caller.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The migrations folder is missing or a file in it cannot be read as UTF-8.
        public static let unreadable = Code("unreadable")
        /// A file in the folder is not named `NNNN_snake_name.sql`.
        public static let malformedName = Code("malformedName")
        /// Two files share a number.
        public static let duplicateVersion = Code("duplicateVersion")
        /// The numbers do not run 1, 2, 3… without a gap.
        public static let gap = Code("gap")
        /// An applied migration's file changed since it was applied.
        public static let editedAfterApplied = Code("editedAfterApplied")
        /// An applied migration's file now has another name.
        public static let renamedAfterApplied = Code("renamedAfterApplied")
        /// The database has a migration this build has no file for.
        public static let unknownAppliedVersion = Code("unknownAppliedVersion")
        /// A new file is numbered below one already applied.
        public static let outOfOrder = Code("outOfOrder")
        /// A migration's SQL failed; none of it was kept.
        public static let failed = Code("failed")
        /// A migration left rows pointing at missing parents.
        public static let foreignKeyViolation = Code("foreignKeyViolation")
    }

    public let code: Code
    public let description: String
    /// The backend's own error, when a migration's SQL failed.
    public let underlying: (any Error & Sendable)?

    public init(_ code: Code, _ description: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.description = description
        self.underlying = underlying
    }
}
