import Foundation
import Synchronization
import Testing
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidSupport
@testable import RetroRapidServer

/// The server's limits on guessing, under an injected clock, counted in a real SQLite file.
@Suite("RateLimits")
struct RateLimitsTests {
    /// A clock the test moves: the memory's (`now`) and the database's (`date`) together.
    final class TestClock: Sendable {
        let start = ContinuousClock.now
        let startDate = Date()
        private let offset = Mutex(Duration.zero)
        var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
        var date: Date { startDate.addingTimeInterval(offset.withLock { $0 }.seconds) }
        func advance(_ by: Duration) { offset.withLock { $0 += by } }
    }

    /// The stored counts, in a migrated SQLite file of `folder`.
    static func store(_ folder: TemporaryDataFolder) throws -> SQLRateLimitRepository {
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let database = try Database(path: folder.url.appendingPathComponent("limits.sqlite").path)
        try Migrator(database: database, directory: URL(fileURLWithPath: TemporaryDataFolder.migrationsPath)).migrate()
        return SQLRateLimitRepository(executor: SQLiteExecutor(database: database))
    }

    static func limits() -> APILimits {
        var limits = APILimits()
        limits.codeFailuresPerPlayer = RateLimit(2, per: .seconds(60))
        limits.codeFailuresPerAddress = RateLimit(3, per: .seconds(60))
        return limits
    }

    static let unknownCode = StoreError(.notFound, "There is no code X.", field: "code")

    @Test func onlyFailuresCountAndARefusalIsCountedInTheMetric() throws {
        let clock = TestClock()
        let metrics = Metrics()
        let limits = RateLimits(Self.limits(), metrics: metrics, clock: { clock.now })
        let folder = try TemporaryDataFolder()
        let store = try Self.store(folder)
        func guarded<T>(_ keys: [(RateLimits.Scope, String)], _ attempt: () throws -> T) throws -> T {
            try limits.guarded(.codeRedeem, keys, counts: RateLimits.isFailedCodeGuess, in: store, now: clock.date, attempt)
        }
        let keys: [(RateLimits.Scope, String)] = [(.player, "7"), (.address, "192.0.2.1")]
        // Honest use costs nothing, however often.
        for _ in 0..<20 {
            #expect(try guarded(keys) { 1 } == 1)
        }
        for _ in 0..<2 {
            #expect(throws: StoreError.self) {
                try guarded(keys) { () -> Int in throw Self.unknownCode }
            }
        }
        // The player is over: refused without running, whatever they would have sent.
        var ran = false
        let refusal = try #require(throws: RateLimitedError.self) {
            try guarded(keys) { ran = true }
        }
        #expect(!ran)
        #expect(refusal.scope == .player && refusal.retryAfter == 60)
        #expect(refusal.message.contains("at most 2 in any minute"))
        #expect(metrics.counter("retrorapid_rate_limited_total", help: "", labelNames: ["action", "scope"])
            .value("code_redeem", "player") == 1)
        // Another player at the same address has one failure left there (3 per address).
        let other: [(RateLimits.Scope, String)] = [(.player, "8"), (.address, "192.0.2.1")]
        #expect(throws: StoreError.self) {
            try guarded(other) { () -> Int in throw Self.unknownCode }
        }
        let byAddress = try #require(throws: RateLimitedError.self) {
            try guarded(other) { 1 }
        }
        #expect(byAddress.scope == .address)
        // A window later all is forgotten.
        clock.advance(.seconds(60))
        #expect(try guarded(keys) { 1 } == 1)
    }

    /// Two processes on one database (two nodes, or one before and after a restart) each keep
    /// their own memory, and still share one budget: the database decides, and a refusal from
    /// it is remembered, so the next attempt costs no database job.
    @Test func processesOnOneDatabaseShareOneBudget() throws {
        let clock = TestClock()
        let metrics = Metrics()
        let folder = try TemporaryDataFolder()
        let store = try Self.store(folder)
        let nodes = [RateLimits(Self.limits(), metrics: metrics, clock: { clock.now }),
                     RateLimits(Self.limits(), metrics: metrics, clock: { clock.now })]
        let keys: [(RateLimits.Scope, String)] = [(.player, "7"), (.address, "192.0.2.1")]
        var answers: [String] = []
        for index in 0..<6 {
            do {
                _ = try nodes[index % 2].guarded(.codeRedeem, keys, counts: RateLimits.isFailedCodeGuess, in: store,
                                                 now: clock.date) { () -> Int in throw Self.unknownCode }
            } catch let error as RateLimitedError {
                answers.append("429 \(error.scope) \(error.retryAfter)")
            } catch {
                answers.append("404")
            }
            clock.advance(.seconds(1))
        }
        // Two failures per player in any minute, across both: one on each node, then refusals.
        #expect(answers == ["404", "404", "429 player 58", "429 player 57", "429 player 56", "429 player 55"])
        // Each node now refuses from memory: an attempt that reaches the database would throw.
        let failing = FailingRateLimitRepository()
        for node in nodes {
            #expect(throws: RateLimitedError.self) {
                try node.guarded(.codeRedeem, keys, counts: RateLimits.isFailedCodeGuess, in: failing, now: clock.date) { 1 }
            }
        }
        // A process started afresh (a restart) is told by the database.
        let restarted = RateLimits(Self.limits(), metrics: metrics, clock: { clock.now })
        let refusal = try #require(throws: RateLimitedError.self) {
            try restarted.guarded(.codeRedeem, keys, counts: RateLimits.isFailedCodeGuess, in: store, now: clock.date) { 1 }
        }
        #expect(refusal.scope == .player && refusal.retryAfter == 54)
    }

    @Test func whatCountsAsAFailedGuess() {
        #expect(RateLimits.isFailedCodeGuess(Self.unknownCode))
        #expect(RateLimits.isFailedCodeGuess(StoreError(.expired, "expired", field: "code")))
        #expect(RateLimits.isFailedCodeGuess(StoreError(.invalid, "bad", field: "code")))
        // A valid code this player cannot use, a bad device label, a database failure: no guess.
        #expect(!RateLimits.isFailedCodeGuess(StoreError(.conflict, "already unlimited", field: "code")))
        #expect(!RateLimits.isFailedCodeGuess(StoreError(.invalid, "bad label", field: "deviceLabel")))
        #expect(!RateLimits.isFailedCodeGuess(DatabaseWorkerError.shutDown))
        #expect(RateLimits.isFailedSignIn(StoreError(.unauthorized, "unknown token")))
        #expect(!RateLimits.isFailedSignIn(StoreError(.notFound, "no player")))
    }

    @Test func everySeriesIsThereFromTheStart() {
        let metrics = Metrics()
        _ = RateLimits(APILimits(), metrics: metrics)
        let text = metrics.render()
        for (action, scope) in RateLimits.pairs {
            #expect(text.contains(#"retrorapid_rate_limited_total{action="\#(action.rawValue)",scope="\#(scope.rawValue)"} 0"#))
        }
    }

    /// Many addresses together cannot pass the server-wide bound on new players, one address
    /// cannot pass its own, and a refusal by either costs the other nothing.
    @Test func newPlayersAreBoundedPerAddressAndForTheWholeServer() throws {
        let clock = TestClock()
        let metrics = Metrics()
        var configured = APILimits()
        configured.playerCreation = RateLimit(2, per: .seconds(60))
        configured.serverPlayerCreation = RateLimit(3, per: .seconds(60))
        let limits = RateLimits(configured, metrics: metrics, clock: { clock.now })
        let folder = try TemporaryDataFolder()
        let store = try Self.store(folder)
        func take(_ address: String) throws { try limits.takePlayerCreation(addressKey: address, in: store, now: clock.date) }
        let counter = metrics.counter("retrorapid_rate_limited_total", help: "", labelNames: ["action", "scope"])
        try take("192.0.2.1")
        try take("192.0.2.1")
        let byAddress = try #require(throws: RateLimitedError.self) { try take("192.0.2.1") }
        #expect(byAddress.scope == .address)
        clock.advance(.seconds(10))
        try take("192.0.2.2")
        // Three on the server: a fourth address, new to it, is refused by the server's bound.
        let byServer = try #require(throws: RateLimitedError.self) { try take("192.0.2.3") }
        #expect(byServer.scope == .server && byServer.action == .playerCreate)
        #expect(byServer.retryAfter == 50)  // the oldest of the three, 10 s ago, leaves in 50 s
        #expect(byServer.message.contains("at most 3 in any minute"))
        #expect(counter.value("player_create", "server") == 1)
        #expect(counter.value("player_create", "address") == 1)
        // The first two leave the window: two slots free on the server, and the refused
        // address still has both of its own.
        clock.advance(.seconds(50))
        try take("192.0.2.3")
        try take("192.0.2.3")
        #expect(throws: RateLimitedError.self) { try take("192.0.2.4") }
        #expect(counter.value("player_create", "server") == 2)
    }

    /// docs/OPERATIONS.md's table of limits states each default as the code has it.
    @Test func theOperationsGuideStatesEveryDefault() throws {
        let folder = URL(fileURLWithPath: RunningGameServer.openAPIPath).deletingLastPathComponent()
        let guide = try String(contentsOf: folder.appendingPathComponent("OPERATIONS.md"), encoding: .utf8)
        let defaults = ServerConfiguration()
        let rows: [(String, RateLimit)] = [
            ("new-players-per-address", defaults.newPlayersPerAddress),
            ("new-players-per-server", defaults.newPlayersPerServer),
            ("failed-link-claims-per-address", defaults.failedLinkClaimsPerAddress),
            ("failed-codes-per-player", defaults.failedCodesPerPlayer),
            ("failed-codes-per-address", defaults.failedCodesPerAddress),
            ("failed-sign-ins-per-address", defaults.failedSignInsPerAddress),
        ]
        for (flag, limit) in rows {
            #expect(guide.contains("| `--\(flag)` | `\(limit)` |"), "\(flag) \(limit)")
        }
        let api = try String(contentsOf: folder.appendingPathComponent("API.md"), encoding: .utf8)
        #expect(api.contains("| Failed sign-ins (any route with a token) | \(defaults.failedSignInsPerAddress.count) |"))
        #expect(api.contains("| New players (`POST /players`) | \(defaults.newPlayersPerAddress.count) |"))
        #expect(api.contains("| | \(defaults.newPlayersPerServer.count) | the whole server |"))
        // Generous enough for a class or a conference booth behind one address.
        #expect(defaults.newPlayersPerAddress.count >= 60)
    }

    @Test func anIPv6ClientCountsAsItsSlash64() {
        #expect(RateLimits.addressKey("192.0.2.1") == "192.0.2.1")
        #expect(RateLimits.addressKey("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(RateLimits.addressKey("2001:db8:1:2::99") == "2001:db8:1:2::/64")
        #expect(RateLimits.addressKey("2001:0db8:0001:0002:ffff::1") == "2001:db8:1:2::/64")
        #expect(RateLimits.addressKey("2001:db8::1") == "2001:db8:0:0::/64")
        #expect(RateLimits.addressKey("::1") == "0:0:0:0::/64")
        #expect(RateLimits.addressKey("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(RateLimits.addressKey("not an address") == "not an address")
    }
}

/// A store that fails every call: proves the memory refused before the database was asked.
struct FailingRateLimitRepository: RateLimitRepository {
    struct Asked: Error {}
    func refusal(_ key: RateLimitKey, nowMilliseconds now: Int64) throws -> RateLimitReached? { throw Asked() }
    func take(_ keys: [RateLimitKey], now: Date) throws -> RateLimitTicket { throw Asked() }
    func release(_ ticket: RateLimitTicket) throws { throw Asked() }
    func prune(before cutoff: Date) throws -> Int { throw Asked() }
}
