import CSQLite3
import Foundation
import RetroRapidDomain

/// Brings a database up to the schema of `Migrations/`, one file at a time.
///
/// Each migration runs in its own IMMEDIATE transaction together with its `schema_migrations`
/// row: it is applied and recorded entirely, or not at all. Before anything runs, the files and
/// the recorded rows must agree (same checksums, no unknown versions, no gaps); if they do not,
/// nothing is changed and a ``MigrationError`` says what is wrong. The check is repeated inside
/// every transaction, so two processes migrating at once cannot apply a file twice.
///
/// Foreign keys are switched off while a migration runs and checked with
/// `PRAGMA foreign_key_check` before it commits: rebuilding a table (SQLite's way to change a
/// column) would otherwise cascade-delete the rows that reference it.
public struct Migrator {
    public let database: Database
    /// The files, in version order.
    public let migrations: [Migration]

    /// Reads and checks the migration files in `directory`; throws if any is misnamed,
    /// duplicated or missing from the sequence.
    public init(database: Database, directory: URL) throws {
        self.database = database
        self.migrations = try MigrationPlan.load(from: directory)
    }

    /// The rows of `schema_migrations`, oldest first; empty for a database never migrated.
    public func appliedMigrations() throws -> [AppliedMigration] {
        let exists = try database.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
            .query { _ in true }.isEmpty == false
        guard exists else { return [] }
        return try database.prepare("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version")
            .query { row in
                AppliedMigration(version: row.int(at: 0), name: row.string(at: 1), checksum: row.string(at: 2), appliedAt: row.string(at: 3))
            }
    }

    /// The migrations `migrate()` would apply, in order. Throws, like `migrate()`, when the
    /// files and the database disagree.
    public func pendingMigrations() throws -> [Migration] {
        try plan(applied: appliedMigrations())
    }

    /// Applies every pending migration in order and returns what it applied (empty when up to
    /// date). Stops at the first failure: that migration leaves no trace, earlier ones stay.
    @discardableResult
    public func migrate() throws -> [AppliedMigration] {
        guard !database.isInTransaction else {
            throw DatabaseError.misuse("migrate() called inside an open transaction")
        }
        // PRAGMA foreign_keys is a no-op inside a transaction, so it is switched around each one.
        let foreignKeysWereOn = try database.prepare("PRAGMA foreign_keys").query { $0.bool(at: 0) }.first ?? false
        try database.execute(sql: "PRAGMA foreign_keys = OFF")
        defer { if foreignKeysWereOn { try? database.execute(sql: "PRAGMA foreign_keys = ON") } }

        var applied: [AppliedMigration] = []
        while let migration = try database.transaction(.immediate, applyNext) {
            applied.append(migration)
        }
        return applied
    }

    /// Inside the write transaction: checks the files against the recorded rows again (another
    /// process may have migrated meanwhile), then applies and records the next migration.
    private func applyNext(_ db: Database) throws -> AppliedMigration? {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                checksum TEXT NOT NULL,
                applied_at TEXT NOT NULL
            ) STRICT
            """)
        guard let migration = try plan(applied: appliedMigrations()).first else { return nil }
        do {
            try db.withTransactionControlDenied { try db.execute(sql: migration.sql) }
        } catch let error as DatabaseError {
            let hint = error.primaryCode == .auth
                ? " (a migration must not BEGIN, COMMIT, ROLLBACK or SAVEPOINT: the migrator runs each file in its own transaction)"
                : ""
            throw MigrationError(.failed, "migration \(migration.identifier) failed and was rolled back: \(error.message)\(hint)", underlying: error)
        }
        let orphans = try db.prepare("PRAGMA foreign_key_check").query { "\($0.string(at: 0)) row \($0.int64(at: 1)) → \($0.string(at: 2))" }
        guard orphans.isEmpty else {
            throw MigrationError(.foreignKeyViolation, "migration \(migration.identifier) was rolled back: it leaves rows whose parent is missing: \(orphans.prefix(5).joined(separator: ", "))")
        }
        let appliedAt = try db.prepare("""
            INSERT INTO schema_migrations (version, name, checksum, applied_at)
            VALUES (?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
            RETURNING applied_at
            """).query([migration.version, migration.name, migration.checksum]) { $0.string(at: 0) }.first ?? ""
        return AppliedMigration(version: migration.version, name: migration.name, checksum: migration.checksum, appliedAt: appliedAt)
    }

    private func plan(applied: [AppliedMigration]) throws -> [Migration] {
        try MigrationPlan.pending(files: migrations, applied: applied)
    }
}
