import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// A database file and a migrations folder of its own, in a fresh temporary folder.
struct MigrationFixture {
    let folder: URL
    let migrations: URL
    let db: Database

    init(in folder: URL) throws {
        self.folder = folder
        migrations = folder.appendingPathComponent("Migrations", isDirectory: true)
        try FileManager.default.createDirectory(at: migrations, withIntermediateDirectories: true)
        db = try openDatabase(in: folder)
    }

    func write(_ fileName: String, _ sql: String) throws {
        try Data(sql.utf8).write(to: migrations.appendingPathComponent(fileName))
    }

    func remove(_ fileName: String) throws {
        try FileManager.default.removeItem(at: migrations.appendingPathComponent(fileName))
    }

    /// A migrator that reads the folder as it is now.
    func migrator() throws -> Migrator {
        try Migrator(database: db, directory: migrations)
    }
}

@Suite struct MigratorTests {
    @Test func appliesInNumericOrderAndRecordsChecksums() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            // Written in reverse: 0002 only works after 0001.
            let second = "INSERT INTO scores (value) VALUES (10), (20);\n"
            let first = "CREATE TABLE scores (value INTEGER NOT NULL) STRICT;\n"
            try fixture.write("0002_first_scores.sql", second)
            try fixture.write("0001_scores.sql", first)

            let migrator = try fixture.migrator()
            #expect(try migrator.pendingMigrations().map(\.identifier) == ["0001_scores", "0002_first_scores"])
            let applied = try migrator.migrate()

            #expect(applied.map(\.identifier) == ["0001_scores", "0002_first_scores"])
            #expect(try fixture.db.column("SELECT value FROM scores ORDER BY value") == [.integer(10), .integer(20)])
            let recorded = try migrator.appliedMigrations()
            #expect(recorded == applied)
            #expect(recorded.map(\.checksum) == [SHA256.hexDigest(Array(first.utf8)), SHA256.hexDigest(Array(second.utf8))])
            #expect(recorded.map(\.name) == ["scores", "first_scores"])
            for record in recorded {
                // ISO-8601 UTC: 2026-01-15T10:23:45Z
                #expect(record.appliedAt.count == 20)
                #expect(record.appliedAt.hasSuffix("Z"))
                #expect(ISO8601DateFormatter().date(from: record.appliedAt) != nil)
            }
            #expect(try migrator.pendingMigrations().isEmpty)
        }
    }

    @Test func secondRunAppliesNothing() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_scores.sql", "CREATE TABLE scores (value INTEGER) STRICT;")
            #expect(try fixture.migrator().migrate().count == 1)
            let before = try fixture.db.dump()
            #expect(try fixture.migrator().migrate().isEmpty)
            #expect(try fixture.db.dump() == before)
        }
    }

    @Test func onlyNewMigrationsRunLater() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_scores.sql", "CREATE TABLE scores (value INTEGER) STRICT;")
            try fixture.migrator().migrate()
            try fixture.write("0002_more.sql", "INSERT INTO scores VALUES (1);")
            #expect(try fixture.migrator().pendingMigrations().map(\.version) == [2])
            #expect(try fixture.migrator().migrate().map(\.version) == [2])
            #expect(try fixture.db.column("SELECT value FROM scores") == [.integer(1)])
        }
    }

    @Test func editedAppliedMigrationIsRefusedAndNothingChanges() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_players.sql", "CREATE TABLE players (id INTEGER PRIMARY KEY) STRICT;")
            try fixture.migrator().migrate()
            try fixture.write("0001_players.sql", "CREATE TABLE players (id INTEGER PRIMARY KEY, nick TEXT) STRICT;")
            try fixture.write("0002_scores.sql", "CREATE TABLE scores (value INTEGER) STRICT;")
            let before = try fixture.db.dump()

            let migrator = try fixture.migrator()
            let error = #expect(throws: MigrationError.self) { try migrator.migrate() }
            #expect(error?.code == .editedAfterApplied)
            #expect(error?.description.contains("migration 0001_players was edited after it was applied") == true)
            #expect(throws: MigrationError.self) { try migrator.pendingMigrations() }
            #expect(try fixture.db.dump() == before)
        }
    }

    @Test func renamedAppliedMigrationIsRefused() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            let sql = "CREATE TABLE players (id INTEGER PRIMARY KEY) STRICT;"
            try fixture.write("0001_players.sql", sql)
            try fixture.migrator().migrate()
            try fixture.remove("0001_players.sql")
            try fixture.write("0001_people.sql", sql)
            let error = #expect(throws: MigrationError.self) { try fixture.migrator().migrate() }
            #expect(error?.code == .renamedAfterApplied)
        }
    }

    @Test func databaseNewerThanTheCodeIsRefusedAndNothingChanges() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_players.sql", "CREATE TABLE players (id INTEGER PRIMARY KEY) STRICT;")
            try fixture.write("0002_scores.sql", "CREATE TABLE scores (value INTEGER) STRICT;")
            try fixture.migrator().migrate()
            try fixture.remove("0002_scores.sql")
            let before = try fixture.db.dump()

            let error = #expect(throws: MigrationError.self) { try fixture.migrator().migrate() }
            #expect(error?.code == .unknownAppliedVersion)
            #expect(error?.description.contains("database is newer than this code: it has migration 0002_scores which this build does not know") == true)
            #expect(try fixture.db.dump() == before)
        }
    }

    @Test func newMigrationNumberedBelowAnAppliedOneIsRefused() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_a.sql", "CREATE TABLE a (x INTEGER) STRICT;")
            try fixture.write("0002_b.sql", "CREATE TABLE b (x INTEGER) STRICT;")
            try fixture.migrator().migrate()
            // As if 0001 had been added to the folder after 0002 was applied.
            try fixture.db.execute(sql: "DELETE FROM schema_migrations WHERE version = 1")
            let error = #expect(throws: MigrationError.self) { try fixture.migrator().migrate() }
            #expect(error?.code == .outOfOrder)
        }
    }

    @Test(arguments: [
        "1_players.sql", "00001_players.sql", "0001-players.sql", "0001_Players.sql", "0001_players.SQL",
        "0001_.sql", "0001__players.sql", "0001_players_.sql", "0001_play ers.sql", "0001_players.sql.bak",
        "abcd_players.sql", "README.md",
    ])
    func malformedFileNameIsRefusedBeforeTouchingTheDatabase(fileName: String) throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_initial.sql", "CREATE TABLE a (x INTEGER) STRICT;")
            try fixture.write(fileName, "CREATE TABLE b (x INTEGER) STRICT;")
            let error = #expect(throws: MigrationError.self) { try fixture.migrator() }
            #expect(error?.code == .malformedName)
            #expect(error?.description.contains(fileName) == true)
            #expect(try fixture.db.dump() == [])
        }
    }

    @Test func wellFormedNamesAndHiddenFilesAreAccepted() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_initial.sql", "CREATE TABLE a (x INTEGER) STRICT;")
            try fixture.write("0002_add_scores_2.sql", "CREATE TABLE b (x INTEGER) STRICT;")
            try fixture.write(".DS_Store", "")
            #expect(try fixture.migrator().migrations.map(\.identifier) == ["0001_initial", "0002_add_scores_2"])
        }
    }

    @Test func twoFilesWithOneNumberAreRefused() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_players.sql", "CREATE TABLE a (x INTEGER) STRICT;")
            try fixture.write("0001_scores.sql", "CREATE TABLE b (x INTEGER) STRICT;")
            let error = #expect(throws: MigrationError.self) { try fixture.migrator() }
            #expect(error?.code == .duplicateVersion)
        }
    }

    @Test(arguments: [["0001_a.sql", "0003_c.sql"], ["0002_b.sql"], ["0000_zero.sql", "0001_a.sql"]])
    func gapsInNumberingAreRefused(fileNames: [String]) throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            for name in fileNames { try fixture.write(name, "SELECT 1;") }
            let error = #expect(throws: MigrationError.self) { try fixture.migrator() }
            #expect(error?.code == .gap)
        }
    }

    @Test func missingFolderIsReported() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            let error = #expect(throws: MigrationError.self) {
                try Migrator(database: db, directory: folder.appendingPathComponent("nowhere"))
            }
            #expect(error?.code == .unreadable)
        }
    }

    @Test func failingMigrationIsRolledBackEntirelyAndStopsTheRun() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_scores.sql", "CREATE TABLE scores (value INTEGER) STRICT;")
            try fixture.write("0002_broken.sql", """
                CREATE TABLE half_done (x INTEGER) STRICT;
                INSERT INTO scores VALUES (42);
                INSERT INTO no_such_table VALUES (1);
                """)
            try fixture.write("0003_after.sql", "CREATE TABLE after_broken (x INTEGER) STRICT;")

            let error = #expect(throws: MigrationError.self) { try fixture.migrator().migrate() }
            #expect(error?.code == .failed)
            #expect(error?.description.contains("0002_broken") == true)
            #expect((error?.underlying as? DatabaseError)?.message.contains("no_such_table") == true)

            let tables = try fixture.db.column("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            #expect(tables == [.text("schema_migrations"), .text("scores")])
            #expect(try fixture.db.column("SELECT value FROM scores") == [])
            #expect(try fixture.migrator().appliedMigrations().map(\.version) == [1])
            #expect(!fixture.db.isInTransaction)
        }
    }

    @Test func migrationThatEndsItsOwnTransactionIsRefused() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_sneaky.sql", "CREATE TABLE a (x INTEGER) STRICT; COMMIT; CREATE TABLE b (x INTEGER) STRICT;")
            let error = #expect(throws: MigrationError.self) { try fixture.migrator().migrate() }
            #expect(error?.code == .failed)
            #expect(error?.description.contains("must not BEGIN, COMMIT") == true)
            #expect(try fixture.db.dump() == [])
        }
    }

    @Test func rebuildingAReferencedTableKeepsItsChildrenAndForeignKeysStayOn() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_family.sql", """
                CREATE TABLE parents (id INTEGER PRIMARY KEY) STRICT;
                CREATE TABLE children (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents(id) ON DELETE CASCADE) STRICT;
                INSERT INTO parents VALUES (1);
                INSERT INTO children VALUES (1, 1);
                """)
            // SQLite's way to change a column: copy into a new table, drop, rename.
            try fixture.write("0002_rebuild_parents.sql", """
                CREATE TABLE parents_new (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '') STRICT;
                INSERT INTO parents_new (id) SELECT id FROM parents;
                DROP TABLE parents;
                ALTER TABLE parents_new RENAME TO parents;
                """)
            try fixture.migrator().migrate()
            #expect(try fixture.db.column("SELECT parent_id FROM children") == [.integer(1)])
            #expect(try fixture.db.scalar("PRAGMA foreign_keys") == .integer(1))
        }
    }

    @Test func migrationLeavingOrphansIsRolledBack() throws {
        try withTemporaryDirectory { folder in
            let fixture = try MigrationFixture(in: folder)
            try fixture.write("0001_family.sql", """
                CREATE TABLE parents (id INTEGER PRIMARY KEY) STRICT;
                CREATE TABLE children (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents(id)) STRICT;
                """)
            try fixture.write("0002_orphan.sql", "INSERT INTO children VALUES (1, 99);")
            let error = #expect(throws: MigrationError.self) { try fixture.migrator().migrate() }
            #expect(error?.code == .foreignKeyViolation)
            #expect(try fixture.db.column("SELECT count(*) FROM children") == [.integer(0)])
            #expect(try fixture.migrator().appliedMigrations().map(\.version) == [1])
            #expect(try fixture.db.scalar("PRAGMA foreign_keys") == .integer(1))
        }
    }
}
