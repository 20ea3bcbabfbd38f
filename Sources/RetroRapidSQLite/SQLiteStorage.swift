import Foundation
import RetroRapidDomain
import RetroRapidSQL

/// The SQLite backend's ``StorageConnection``: one ``Database`` (one connection to one file)
/// and the `Migrations/` folder its schema comes from.
public final class SQLiteStorage: StorageConnection {
    public let database: Database
    /// The connection's one statement cache, shared by the repositories written once.
    public let executor: SQLiteExecutor
    /// The folder of `NNNN_name.sql` files.
    public let migrations: URL

    public init(database: Database, migrations: URL) {
        self.database = database
        self.executor = SQLiteExecutor(database: database)
        self.migrations = migrations
    }

    public var location: String { database.path }

    public func repositories(_ settings: RepositorySettings) -> StorageRepositories {
        StorageRepositories(
            players: SQLPlayerRepository(executor: executor),
            linkCodes: SQLLinkCodeRepository(executor: executor, policy: settings.linkCodes),
            quota: SQLQuotaRepository(executor: executor, dailyFreePlays: settings.dailyFreePlays),
            entitlements: SQLEntitlementRepository(executor: executor),
            codes: SQLCodeRepository(executor: executor),
            orders: SQLOrderRepository(executor: executor, basePrice: settings.basePrice),
            paymentEvents: SQLPaymentEventRepository(executor: executor),
            settings: SQLSettingsRepository(executor: executor),
            games: SQLGameRepository(executor: executor),
            runningGames: SQLRunningGameRepository(sqlite: executor, dailyFreePlays: settings.dailyFreePlays),
            leaderboards: SQLLeaderboardRepository(executor: executor),
            cluster: SQLClusterRepository(executor: executor),
            dailyRoads: SQLDailyRoadRepository(executor: executor),
            races: SQLRaceRepository(executor: executor),
            roomPlaces: SQLRoomPlaceRepository(executor: executor),
            rateLimits: SQLRateLimitRepository(executor: executor),
            operators: SQLOperatorRepository(executor: executor),
            auditLog: SQLAuditLogRepository(executor: executor),
            summaries: SQLServiceSummaryRepository(executor: executor))
    }

    @discardableResult
    public func migrate() throws -> [AppliedMigration] {
        try Migrator(database: database, directory: migrations).migrate()
    }

    public func appliedMigrations() throws -> [AppliedMigration] {
        try Migrator(database: database, directory: migrations).appliedMigrations()
    }

    public func pendingMigrations() throws -> [String] {
        try Migrator(database: database, directory: migrations).pendingMigrations().map(\.identifier)
    }

    /// SQLite's online backup (``Database/backup(to:pagesPerStep:progress:)``), then
    /// `PRAGMA integrity_check` and row counts on a connection of its own to the copy.
    public func commitGroup(_ count: Int, _ unit: (Int) throws -> Void) throws -> [(any Error)?] {
        try database.group(count, unit)
    }

    public func backup(to path: String, progress: (_ copied: Int, _ total: Int) -> Void) throws -> StorageBackup {
        var pages = 0
        try database.backup(to: path) { copied, total in
            pages = copied
            progress(copied, total)
        }
        let copy = try Database(path: path)
        let integrity = try copy.prepare("PRAGMA integrity_check").query { $0.string(at: 0) }
        let counts = try ["players", "games", "promo_codes", "orders"].compactMap { table -> (table: String, rows: Int)? in
            // Only tables the schema has: an old database is copied as it is.
            let exists = try copy.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").query([table]) { _ in true }
            guard !exists.isEmpty else { return nil }
            return (table, try copy.prepare("SELECT count(*) FROM \(table)").query { $0.int(at: 0) }.first ?? 0)
        }
        return StorageBackup(copiedUnits: pages, problems: integrity == ["ok"] ? [] : Array(integrity.prefix(5)), rowCounts: counts)
    }
}
