#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// The server's one connection to the store and a repository for each concept, as the
/// storage thread's work sees them. It names no backend: `StorageFactory` opened the connection.
///
/// Threading rule: a `StorageContext` lives and dies on the `DatabaseWorker`'s thread. It is
/// deliberately not `Sendable` (nor is a `StorageConnection`), so the compiler keeps it from
/// leaking into another thread's closure; `DatabaseWorker.perform` hands it only to work
/// running there, and every accessor checks that it is.
public final class StorageContext {
    public let connection: any StorageConnection
    public let players: any PlayerRepository
    public let linkCodes: any LinkCodeRepository
    public let quota: any QuotaRepository
    public let entitlements: any EntitlementRepository
    public let codes: any CodeRepository
    public let orders: any OrderRepository
    public let webhook: PaymentWebhook
    public let settings: any SettingsRepository
    public let games: any GameRepository
    public let runningGames: any RunningGameRepository
    public let leaderboards: any LeaderboardRepository

    /// The time the work should act at; tests move it.
    private let clock: @Sendable () -> Date
    private let thread: pthread_t

    /// Builds the repositories from the configuration. On the storage thread.
    init(connection: any StorageConnection, configuration: ServerConfiguration, clock: @escaping @Sendable () -> Date) {
        self.connection = connection
        self.clock = clock
        self.thread = pthread_self()
        let repositories = connection.repositories(RepositorySettings(
            dailyFreePlays: configuration.dailyFreePlays,
            basePrice: Money(minorUnits: Int64(configuration.unlimitedPriceMinorUnits), currency: configuration.currency)))
        players = repositories.players
        linkCodes = repositories.linkCodes
        quota = repositories.quota
        entitlements = repositories.entitlements
        codes = repositories.codes
        orders = repositories.orders
        webhook = PaymentWebhook(events: repositories.paymentEvents, secret: configuration.webhookSecret ?? "")
        settings = repositories.settings
        games = repositories.games
        runningGames = repositories.runningGames
        leaderboards = repositories.leaderboards
    }

    /// Now, by the worker's clock. Work takes it once and passes it to every repository call,
    /// so one request sees one instant.
    public var now: Date {
        assertOnStorageThread()
        return clock()
    }

    /// Traps when called off the storage thread: a `Database` used from two threads at once is
    /// undefined behaviour (SQLite's NOMUTEX mode, say), so this must fail loudly, not sometimes.
    public func assertOnStorageThread() {
        precondition(pthread_equal(thread, pthread_self()) != 0,
                     "StorageContext used off the storage thread")
    }
}
