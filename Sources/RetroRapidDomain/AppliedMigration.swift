/// A schema migration the store has applied, as every backend records it.
public struct AppliedMigration: Sendable, Equatable {
    public let version: Int
    public let name: String
    /// SHA-256 hex of the migration file's bytes when it was applied, so an edit is noticed.
    public let checksum: String
    /// ISO-8601 UTC, e.g. `2026-01-15T10:23:45Z`.
    public let appliedAt: String

    package init(version: Int, name: String, checksum: String, appliedAt: String) {
        self.version = version
        self.name = name
        self.checksum = checksum
        self.appliedAt = appliedAt
    }

    /// `0001_initial`: how people and messages name it.
    public var identifier: String { Self.identifier(version: version, name: name) }

    package static func identifier(version: Int, name: String) -> String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
    }
}
