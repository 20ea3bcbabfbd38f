import Foundation
import RetroRapidDomain

/// Brings a PostgreSQL database up to the schema of `Migrations/postgresql/`, one file at a
/// time, by the same rules as SQLite's migrator (``MigrationPlan``: checksums recorded, an
/// edited, renamed or unknown migration refused before anything runs).
///
/// Each migration runs in its own transaction together with its `schema_migrations` row, so it
/// is applied and recorded entirely or not at all (PostgreSQL's DDL is transactional). The
/// transaction first takes a transaction-scoped advisory lock, so nodes starting at once on
/// one database migrate one after another, and each checks the recorded rows again under it:
/// no file is applied twice.
public struct PostgresMigrator {
    public let connection: PostgresConnection
    /// The files, in version order.
    public let migrations: [Migration]

    /// The advisory lock key every migrator takes: an arbitrary constant of our own
    /// ("RRMIGRAT" in ASCII).
    static let lockKey: Int64 = 0x5252_4D49_4752_4154

    public init(connection: PostgresConnection, directory: URL) throws {
        self.connection = connection
        migrations = try MigrationPlan.load(from: directory)
    }

    /// The rows of `schema_migrations`, oldest first; empty for a database never migrated.
    public func appliedMigrations() throws -> [AppliedMigration] {
        try Self.applied(connection)
    }

    /// The migrations `migrate()` would apply, in order; throws when the files and the
    /// database disagree.
    public func pendingMigrations() throws -> [Migration] {
        try MigrationPlan.pending(files: migrations, applied: appliedMigrations())
    }

    /// Applies every pending migration in order and returns what it applied (empty when up to
    /// date). Stops at the first failure: that migration leaves no trace, earlier ones stay.
    @discardableResult
    public func migrate() throws -> [AppliedMigration] {
        var applied: [AppliedMigration] = []
        while let migration = try connection.transaction(.readCommitted, applyNext) {
            applied.append(migration)
        }
        return applied
    }

    private func applyNext(_ db: PostgresConnection) throws -> AppliedMigration? {
        try db.execute("SELECT pg_advisory_xact_lock($1)", [Self.lockKey])
        try db.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY,
                name TEXT NOT NULL,
                checksum TEXT NOT NULL,
                applied_at TEXT NOT NULL
            )
            """)
        guard let migration = try MigrationPlan.pending(files: migrations, applied: Self.applied(db)).first else { return nil }
        do {
            try db.executeScript(migration.sql)
        } catch let error as PostgresError {
            throw MigrationError(.failed, "migration \(migration.identifier) failed and was rolled back: \(error.message)", underlying: error)
        }
        // A file that ends the transaction itself would leave the rest of it, and its record,
        // outside any transaction: refuse it (what it committed cannot be taken back).
        guard db.isInTransaction else {
            throw MigrationError(.failed, "migration \(migration.identifier) ended the migrator's transaction (a migration must not BEGIN, COMMIT or ROLLBACK: the migrator runs each file in its own transaction)")
        }
        let appliedAt = try db.execute("""
            INSERT INTO schema_migrations (version, name, checksum, applied_at)
            VALUES ($1, $2, $3, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
            RETURNING applied_at
            """, [migration.version, migration.name, migration.checksum]).first?.string(at: 0) ?? ""
        return AppliedMigration(version: migration.version, name: migration.name, checksum: migration.checksum, appliedAt: appliedAt)
    }

    private static func applied(_ db: PostgresConnection) throws -> [AppliedMigration] {
        let exists = try db.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").first?.bool(at: 0) ?? false
        guard exists else { return [] }
        return try db.execute("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version").map { row in
            AppliedMigration(version: row.int(at: 0), name: row.string(at: 1), checksum: row.string(at: 2), appliedAt: row.string(at: 3))
        }
    }
}
