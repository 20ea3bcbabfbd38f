/// A repository for each concept, all over one connection to the store: what the server's
/// storage thread and every operator command work with. Built by
/// ``StorageConnection/repositories(_:)``; the same set, and the same contract, whatever the
/// backend.
public struct StorageRepositories {
    public let players: any PlayerRepository
    public let linkCodes: any LinkCodeRepository
    public let quota: any QuotaRepository
    public let entitlements: any EntitlementRepository
    public let codes: any CodeRepository
    public let orders: any OrderRepository
    public let paymentEvents: any PaymentEventRepository
    public let settings: any SettingsRepository
    public let games: any GameRepository
    public let runningGames: any RunningGameRepository
    public let leaderboards: any LeaderboardRepository
    /// Who holds each running game in a cluster of nodes (unused by a single node).
    public let cluster: any ClusterRepository
    /// The daily roads' seeds and boards.
    public let dailyRoads: any DailyRoadRepository
    /// Finished races and their finish order.
    public let races: any RaceRepository
    /// Which node holds each race room (cluster mode only).
    public let roomPlaces: any RoomPlaceRepository
    /// The counts behind the limits on guessing secrets and on new players.
    public let rateLimits: any RateLimitRepository
    /// The accounts of the people who run the service.
    public let operators: any OperatorRepository
    /// Every change an operator made, newest first; never edited.
    public let auditLog: any AuditLogRepository
    /// A day's counts across the tables, for the console's overview.
    public let summaries: any ServiceSummaryRepository

    public init(players: any PlayerRepository, linkCodes: any LinkCodeRepository, quota: any QuotaRepository,
                entitlements: any EntitlementRepository, codes: any CodeRepository, orders: any OrderRepository,
                paymentEvents: any PaymentEventRepository, settings: any SettingsRepository, games: any GameRepository,
                runningGames: any RunningGameRepository, leaderboards: any LeaderboardRepository,
                cluster: any ClusterRepository, dailyRoads: any DailyRoadRepository, races: any RaceRepository,
                roomPlaces: any RoomPlaceRepository, rateLimits: any RateLimitRepository, operators: any OperatorRepository,
                auditLog: any AuditLogRepository, summaries: any ServiceSummaryRepository) {
        self.players = players
        self.linkCodes = linkCodes
        self.quota = quota
        self.entitlements = entitlements
        self.codes = codes
        self.orders = orders
        self.paymentEvents = paymentEvents
        self.settings = settings
        self.games = games
        self.runningGames = runningGames
        self.leaderboards = leaderboards
        self.cluster = cluster
        self.dailyRoads = dailyRoads
        self.races = races
        self.roomPlaces = roomPlaces
        self.rateLimits = rateLimits
        self.operators = operators
        self.auditLog = auditLog
        self.summaries = summaries
    }
}

/// The settings the repositories take from the server's configuration.
public struct RepositorySettings: Sendable, Equatable {
    /// Free plays per player per UTC day.
    public var dailyFreePlays: Int
    /// The price of unlimited play before discounts.
    public var basePrice: Money
    public var linkCodes: LinkCodePolicy
    /// The cluster node's process (`cluster_nodes.instance`) whose round checkpoints the
    /// running games write as slices (PostgreSQL); nil writes a row per game.
    public var checkpointProcess: String?

    public init(dailyFreePlays: Int = 5, basePrice: Money = .defaultUnlimitedPrice, linkCodes: LinkCodePolicy = LinkCodePolicy(),
                checkpointProcess: String? = nil) {
        self.dailyFreePlays = dailyFreePlays
        self.basePrice = basePrice
        self.linkCodes = linkCodes
        self.checkpointProcess = checkpointProcess
    }
}
