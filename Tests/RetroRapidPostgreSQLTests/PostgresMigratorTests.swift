import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing

/// The migrator against a real server: the product's migrations, and the rules it shares with
/// SQLite's (docs/STORAGE.md) on folders of its own.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresMigratorTests {
    let postgresMigrations = productMigrations.appendingPathComponent("postgresql")

    @Test func theProductMigrationsApplyOnceAndRecordChecksums() throws {
        try TestPostgres.withDatabase { url in
            let connection = try PostgresConnection(conninfo: url)
            let migrator = try PostgresMigrator(connection: connection, directory: postgresMigrations)
            let applied = try migrator.migrate()
            #expect(applied.map(\.identifier) == migrator.migrations.map(\.identifier))
            #expect(applied.map(\.checksum) == migrator.migrations.map(\.checksum))
            #expect(try migrator.migrate().isEmpty)
            #expect(try migrator.pendingMigrations().isEmpty)
            // The tables SQLite's migrations reach, the slices of cluster nodes' rounds (PostgreSQL's
            // only), and the migrator's own.
            let tables = try connection.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
                .map { $0.string(at: 0) }
            #expect(tables == ["audit_log", "best_scores", "checkpoint_slices", "cluster_nodes", "code_redemptions", "daily_attempts", "daily_roads", "devices",
                               "game_checkpoints", "game_holders", "games", "link_codes", "operators", "orders", "player_settings",
                               "players", "plays", "promo_codes", "race_entries", "races", "rate_limit_events", "rate_limit_keys",
                               "room_places", "running_games",
                               "schema_migrations", "score_counts", "unlimited_entitlements", "webhook_events"])
        }
    }

    @Test func anEditedMigrationIsRefusedAndNothingRuns() throws {
        try withTemporaryDirectory { folder in
            try TestPostgres.withDatabase { url in
                let connection = try PostgresConnection(conninfo: url)
                try Data("CREATE TABLE scores (value BIGINT NOT NULL);\n".utf8).write(to: folder.appendingPathComponent("0001_scores.sql"))
                try PostgresMigrator(connection: connection, directory: folder).migrate()
                try Data("CREATE TABLE scores (value TEXT);\n".utf8).write(to: folder.appendingPathComponent("0001_scores.sql"))
                try Data("CREATE TABLE more (x BIGINT);\n".utf8).write(to: folder.appendingPathComponent("0002_more.sql"))
                let error = #expect(throws: MigrationError.self) { try PostgresMigrator(connection: connection, directory: folder).migrate() }
                #expect(error?.code == .editedAfterApplied)
                #expect(try connection.execute("SELECT to_regclass('more') IS NULL").first!.bool(at: 0))
            }
        }
    }

    @Test func aFailingMigrationLeavesNoTraceAndEarlierOnesStay() throws {
        try withTemporaryDirectory { folder in
            try TestPostgres.withDatabase { url in
                let connection = try PostgresConnection(conninfo: url)
                try Data("CREATE TABLE scores (value BIGINT NOT NULL);\n".utf8).write(to: folder.appendingPathComponent("0001_scores.sql"))
                try Data("CREATE TABLE half (x BIGINT);\nINSERT INTO no_such_table VALUES (1);\n".utf8)
                    .write(to: folder.appendingPathComponent("0002_broken.sql"))
                let error = #expect(throws: MigrationError.self) { try PostgresMigrator(connection: connection, directory: folder).migrate() }
                #expect(error?.code == .failed)
                #expect((error?.underlying as? PostgresError)?.sqlState == "42P01")
                #expect(try PostgresMigrator(connection: connection, directory: folder).appliedMigrations().map(\.identifier) == ["0001_scores"])
                #expect(try connection.execute("SELECT to_regclass('half') IS NULL").first!.bool(at: 0))
            }
        }
    }

    @Test func aMigrationThatCommitsItselfIsRefused() throws {
        try withTemporaryDirectory { folder in
            try TestPostgres.withDatabase { url in
                let connection = try PostgresConnection(conninfo: url)
                try Data("CREATE TABLE a (x BIGINT);\nCOMMIT;\n".utf8).write(to: folder.appendingPathComponent("0001_commits.sql"))
                let error = #expect(throws: MigrationError.self) { try PostgresMigrator(connection: connection, directory: folder).migrate() }
                #expect(error?.code == .failed)
                #expect(try PostgresMigrator(connection: connection, directory: folder).appliedMigrations().isEmpty)
            }
        }
    }

    /// Nodes starting at once on one database: every file is applied exactly once.
    @Test func migratorsRacingOnOneDatabaseApplyEachFileOnce() throws {
        try TestPostgres.withDatabase { url in
            let directory = postgresMigrations
            let results = RaceResults()
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do {
                    let connection = try PostgresConnection(conninfo: url)
                    results.add(try PostgresMigrator(connection: connection, directory: directory).migrate().count)
                } catch {
                    results.add(-1)
                }
            }
            let migrations = try MigrationPlan.load(from: directory).count
            // Each file is its own transaction under the lock, so the racers may share the
            // files between them; together they apply each exactly once, and none fails.
            #expect(!results.values.contains(-1) && results.values.reduce(0, +) == migrations)
            let applied = try PostgresMigrator(connection: try PostgresConnection(conninfo: url), directory: directory).appliedMigrations()
            #expect(applied.map(\.identifier) == (try MigrationPlan.load(from: directory).map(\.identifier)))
        }
    }
}

private final class RaceResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Int] = []
    func add(_ value: Int) { lock.lock(); stored.append(value); lock.unlock() }
    var values: [Int] { lock.lock(); defer { lock.unlock() }; return stored }
}
