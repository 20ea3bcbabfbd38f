import CSQLite3
import Foundation
import RetroRapidDomain

/// One SQL file of `Migrations/`, named `NNNN_snake_name.sql`.
public struct Migration: Sendable, Equatable {
    /// The four-digit number, from 1 without gaps.
    public let version: Int
    /// The snake name after the number, e.g. `initial`.
    public let name: String
    /// The file's text.
    public let sql: String
    /// SHA-256 hex of the file's bytes, recorded when applied so an edit is noticed.
    public let checksum: String

    /// `0001_initial`: how people and messages name it.
    public var identifier: String { Migration.identifier(version: version, name: name) }

    static func identifier(version: Int, name: String) -> String {
        AppliedMigration.identifier(version: version, name: name)
    }
}

/// Why the migrator refused to run or stopped. Matched by `code`; new codes break no caller.
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
    /// SQLite's error, when a migration's SQL failed.
    public let underlying: DatabaseError?

    init(_ code: Code, _ description: String, underlying: DatabaseError? = nil) {
        self.code = code
        self.description = description
        self.underlying = underlying
    }
}

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
        self.migrations = try Migrator.loadMigrations(from: directory)
    }

    /// Reads `NNNN_snake_name.sql` files in version order. Every other visible file is an
    /// error, so a typo (`0002_scores.SQL`) is not silently skipped.
    public static func loadMigrations(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw MigrationError(.unreadable, "cannot read the migrations folder \(directory.path): \(error.localizedDescription)")
        }
        var migrations: [Migration] = []
        var malformed: [String] = []
        for fileName in names.sorted() where !fileName.hasPrefix(".") {
            guard let (version, name) = parseFileName(fileName) else {
                malformed.append(fileName)
                continue
            }
            let url = directory.appendingPathComponent(fileName)
            guard let bytes = FileManager.default.contents(atPath: url.path) else {
                throw MigrationError(.unreadable, "cannot read migration \(url.path)")
            }
            guard let sql = String(validating: bytes, as: UTF8.self) else {
                throw MigrationError(.unreadable, "migration \(fileName) is not valid UTF-8")
            }
            migrations.append(Migration(version: version, name: name, sql: sql, checksum: SHA256.hexDigest([UInt8](bytes))))
        }
        guard malformed.isEmpty else {
            throw MigrationError(.malformedName, "malformed migration file name(s) in \(directory.path): \(malformed.joined(separator: ", ")); expected NNNN_snake_name.sql, e.g. 0002_scores.sql")
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError(.duplicateVersion, "migrations \(previous.identifier) and \(next.identifier) share the number \(previous.version)")
        }
        for (offset, migration) in migrations.enumerated() where migration.version != offset + 1 {
            let expected = Migration.identifier(version: offset + 1, name: "…")
            throw MigrationError(.gap, "migration numbers have a gap: expected \(expected) before \(migration.identifier)")
        }
        return migrations
    }

    /// `0001_initial.sql` → (1, "initial"); nil for anything else.
    static func parseFileName(_ fileName: String) -> (Int, String)? {
        let characters = Array(fileName.utf8)
        guard characters.count > 9, fileName.hasSuffix(".sql"), characters[4] == UInt8(ascii: "_"),
              characters[0..<4].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let version = Int(String(decoding: characters[0..<4], as: UTF8.self))
        else { return nil }
        let name = String(decoding: characters[5..<(characters.count - 4)], as: UTF8.self)
        let words = name.split(separator: "_", omittingEmptySubsequences: false)
        let isSnake = words.allSatisfy { word in
            !word.isEmpty && word.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        return isSnake ? (version, name) : nil
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

    /// Checks the recorded rows against the files and returns the files still to apply.
    private func plan(applied: [AppliedMigration]) throws -> [Migration] {
        let files = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for record in applied {
            guard let file = files[record.version] else {
                throw MigrationError(.unknownAppliedVersion, "database is newer than this code: it has migration \(record.identifier) which this build does not know; run a newer build")
            }
            guard file.name == record.name else {
                throw MigrationError(.renamedAfterApplied, "migration \(record.identifier) was applied under that name but its file is now \(file.identifier).sql; rename it back")
            }
            guard file.checksum == record.checksum else {
                throw MigrationError(.editedAfterApplied, "migration \(record.identifier) was edited after it was applied; restore the file and put the change in a new migration")
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        let pending = migrations.filter { !appliedVersions.contains($0.version) }
        if let latest = applied.last, let early = pending.first, early.version < latest.version {
            throw MigrationError(.outOfOrder, "migration \(early.identifier) is new but \(latest.identifier) is already applied; number new migrations after the last one")
        }
        return pending
    }
}
