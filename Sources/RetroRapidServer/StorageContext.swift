#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RetroRapidStorage
import RetroRapidSupport

/// The server's one SQLite connection and a repository for each concept, as the storage
/// thread's work sees them.
///
/// Threading rule: a `StorageContext` lives and dies on the `DatabaseWorker`'s thread. It is
/// deliberately not `Sendable` (nor is `Database`), so the compiler keeps it from leaking into
/// another thread's closure; `DatabaseWorker.perform` hands it only to work running there, and
/// every accessor checks that it is.
public final class StorageContext {
    public let database: Database
    public let players: PlayerRepository
    public let linkCodes: LinkCodeRepository
    public let quota: QuotaRepository
    public let entitlements: EntitlementRepository
    public let codes: CodeRepository
    public let orders: OrderRepository
    public let webhook: PaymentWebhook
    public let settings: SettingsRepository
    public let games: GameRepository
    public let runningGames: RunningGameRepository
    public let leaderboards: LeaderboardRepository

    /// The time the work should act at; tests move it.
    private let clock: @Sendable () -> Date
    private let thread: pthread_t

    /// Builds the repositories from the configuration. On the storage thread.
    init(database: Database, configuration: ServerConfiguration, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.clock = clock
        self.thread = pthread_self()
        players = PlayerRepository(database: database)
        linkCodes = LinkCodeRepository(database: database)
        quota = QuotaRepository(database: database, dailyFreePlays: configuration.dailyFreePlays)
        entitlements = EntitlementRepository(database: database)
        codes = CodeRepository(database: database)
        orders = OrderRepository(database: database, basePrice: Money(
            minorUnits: Int64(configuration.unlimitedPriceMinorUnits), currency: configuration.currency))
        webhook = PaymentWebhook(database: database, secret: configuration.webhookSecret ?? "")
        settings = SettingsRepository(database: database)
        games = GameRepository(database: database)
        runningGames = RunningGameRepository(database: database, dailyFreePlays: configuration.dailyFreePlays)
        leaderboards = LeaderboardRepository(database: database)
    }

    /// Now, by the worker's clock. Work takes it once and passes it to every repository call,
    /// so one request sees one instant.
    public var now: Date {
        assertOnStorageThread()
        return clock()
    }

    /// Traps when called off the storage thread: a `Database` used from two threads at once is
    /// undefined behaviour in SQLite's NOMUTEX mode, so this must fail loudly, not sometimes.
    public func assertOnStorageThread() {
        precondition(pthread_equal(thread, pthread_self()) != 0,
                     "StorageContext used off the storage thread")
    }
}
