import Foundation
import RetroRapidDomain
import RetroRapidSQL

/// The PostgreSQL backend's ``StorageConnection``: one ``PostgresConnection`` and the
/// `Migrations/postgresql/` folder its schema comes from. The server opens one per storage
/// thread (its pool); many nodes open theirs on the same database.
public final class PostgresStorage: StorageConnection {
    public let connection: PostgresConnection
    /// The folder of `NNNN_name.sql` files for PostgreSQL.
    public let migrations: URL
    /// The database URL with any password hidden: what messages show.
    public let location: String

    public init(connection: PostgresConnection, migrations: URL, location: String) {
        self.connection = connection
        self.migrations = migrations
        self.location = location
    }

    public func repositories(_ settings: RepositorySettings) -> StorageRepositories {
        StorageRepositories(
            players: SQLPlayerRepository(executor: connection),
            linkCodes: SQLLinkCodeRepository(executor: connection, policy: settings.linkCodes),
            quota: SQLQuotaRepository(executor: connection, dailyFreePlays: settings.dailyFreePlays),
            entitlements: SQLEntitlementRepository(executor: connection),
            codes: SQLCodeRepository(executor: connection),
            orders: SQLOrderRepository(executor: connection, basePrice: settings.basePrice),
            paymentEvents: SQLPaymentEventRepository(executor: connection),
            settings: SQLSettingsRepository(executor: connection),
            games: SQLGameRepository(executor: connection),
            runningGames: SQLRunningGameRepository(postgres: connection, process: settings.checkpointProcess,
                                                    dailyFreePlays: settings.dailyFreePlays),
            leaderboards: SQLLeaderboardRepository(executor: connection),
            cluster: SQLClusterRepository(executor: connection),
            dailyRoads: SQLDailyRoadRepository(executor: connection),
            races: SQLRaceRepository(executor: connection),
            roomPlaces: SQLRoomPlaceRepository(executor: connection),
            rateLimits: SQLRateLimitRepository(executor: connection),
            operators: SQLOperatorRepository(executor: connection),
            auditLog: SQLAuditLogRepository(executor: connection),
            summaries: SQLServiceSummaryRepository(executor: connection))
    }

    @discardableResult
    public func migrate() throws -> [AppliedMigration] {
        try PostgresMigrator(connection: connection, directory: migrations).migrate()
    }

    public func appliedMigrations() throws -> [AppliedMigration] {
        try PostgresMigrator(connection: connection, directory: migrations).appliedMigrations()
    }

    public func pendingMigrations() throws -> [String] {
        try PostgresMigrator(connection: connection, directory: migrations).pendingMigrations().map(\.identifier)
    }

    /// A PostgreSQL database is backed up with PostgreSQL's own tools, which copy it
    /// consistently while the nodes keep writing (docs/OPERATIONS.md, "Scale out").
    public func commitGroup(_ count: Int, _ unit: (Int) throws -> Void) throws -> [(any Error)?] {
        try connection.group(count, unit)
    }

    public func backup(to path: String, progress: (_ copied: Int, _ total: Int) -> Void) throws -> StorageBackup {
        throw PostgresError(sqlState: "RRNBK", message: "`retrorapid backup` copies a SQLite file; back up PostgreSQL with pg_dump (or its continuous archiving): see docs/OPERATIONS.md, \"Scale out\"")
    }
}
