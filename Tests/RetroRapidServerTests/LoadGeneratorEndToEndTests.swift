import Foundation
import RetroRapidLoad
import RetroRapidDomain
import RetroRapidSQLite
import Testing
@testable import RetroRapidServer
import RetroRapidSQL

/// `retrorapid loadtest`'s engine against a real server on loopback: real libwebsockets client
/// connections, real games, a real SQLite file. Only counts are checked here; how fast is the
/// benchmark's business (docs/BENCHMARKS.md), never a unit test's.
@Suite("Load generator against a real server", .serialized)
struct LoadGeneratorEndToEndTests {
    /// Players with unlimited play, made as `retrorapid seed-players` makes them.
    private func seedPlayers(_ count: Int, in server: RunningGameServer) throws -> [String] {
        let database = try server.database()
        let players = SQLPlayerRepository(executor: SQLiteExecutor(database: database))
        let entitlements = SQLEntitlementRepository(executor: SQLiteExecutor(database: database))
        return try (1...count).map { number in
            let (player, token) = try players.createPlayer(displayName: "Load \(number)", deviceLabel: "loadtest", now: Date())
            try entitlements.grantUnlimited(playerID: player.id, source: .operator, reference: "test", now: Date())
            return token
        }
    }

    private func options(_ server: RunningGameServer, tokens: [String], connections: Int) -> LoadTestOptions {
        var options = LoadTestOptions()
        options.port = server.port
        options.tokens = tokens
        options.connections = connections
        options.level = "rapid"
        options.rampPerSecond = 200
        options.settleSeconds = 1
        options.holdSeconds = 3
        options.sourceAddresses = ["127.0.0.2", "127.0.0.3"]
        options.serverPID = getpid()
        return options
    }

    @Test func playsRealGamesAndMeasuresThem() throws {
        let server = try RunningGameServer()
        let tokens = try seedPlayers(12, in: server)
        var options = options(server, tokens: tokens, connections: 12)
        // Every needed move missed: each game crashes at its first car (a few steps in) and
        // starts again after 1–3 s, so crashes and restarts fall inside a 3-second window;
        // unneeded lane changes still make moves to time.
        options.behaviour.missChance = 1
        options.behaviour.wanderChance = 0.6
        let report = try LoadGenerator(options: options).run()

        #expect(report.connectionsHeld == 12)
        #expect(report.statistics.disconnectCount == 0 && report.statistics.connectFailures == 0)
        #expect(report.statistics.serverErrors.isEmpty, "errors: \(report.statistics.serverErrors)")
        // Rapid is 420 ms a step: 12 games × 3 s is about 85 steps; allow for crashes and restarts.
        #expect(report.statistics.stepFrames > 40)
        #expect(report.statistics.movesSent > 0)
        #expect(report.latency.count > 0 && report.latency.count <= report.statistics.movesSent)
        #expect(report.jitter.count > 0)
        #expect(report.bytesPerStepFrame > 100 && report.bytesPerStepFrame < 250)
        #expect(report.statistics.crashes > 0 && report.statistics.gamesEnded > 0)
        #expect(report.serverCoreShare != nil && (report.serverResidentKiB ?? 0) > 0)
        // Games that ended were stored with their scores, like anyone's.
        #expect(try server.count("games") >= report.statistics.gamesEnded)
    }

    @Test func idlePlayersSignInAndStartNothing() throws {
        let server = try RunningGameServer()
        let tokens = try seedPlayers(5, in: server)
        var options = options(server, tokens: tokens, connections: 5)
        options.idle = true
        options.holdSeconds = 1
        let report = try LoadGenerator(options: options).run()
        #expect(report.connectionsHeld == 5)
        #expect(report.gamesRunning == 0 && report.statistics.stepFrames == 0 && report.statistics.gamesStarted == 0)
        #expect(try server.count("games") == 0)
    }

    @Test func takesBackAGameLeftByAnEarlierRun() throws {
        let server = try RunningGameServer()
        let tokens = try seedPlayers(3, in: server)
        var options = options(server, tokens: tokens, connections: 3)
        options.behaviour.missChance = 0
        options.holdSeconds = 1
        _ = try LoadGenerator(options: options).run()  // leaves three games waiting for their players
        let second = try LoadGenerator(options: options).run()
        #expect(second.statistics.serverErrors["game_in_progress"] == nil)
        #expect(second.gamesRunning == 3 && second.statistics.stepFrames > 0)
    }

    /// `--steps`: the fixed workload scripts/bench-cost.sh counts.
    @Test func aBoundedTestPlaysOneGameOfItsStepsPerPlayerThenEnds() throws {
        let server = try RunningGameServer()
        let tokens = try seedPlayers(4, in: server)
        var options = options(server, tokens: tokens, connections: 4)
        options.level = "cruise"
        options.steps = 5
        options.holdSeconds = 120  // the bound, not a window: the run ends when the games do
        options.behaviour.missChance = 0
        options.behaviour.wanderChance = 0.5
        let report = try LoadGenerator(options: options).run()
        #expect(!report.interrupted)
        #expect(report.statistics.serverErrors.isEmpty, "errors: \(report.statistics.serverErrors)")
        // One game each, none started again after its game over.
        #expect(report.statistics.gamesStarted == 4 && report.statistics.gamesEnded == 4)
        // Steps 1…5 of every game, then the quit: no step after it (fewer only after a crash).
        #expect(report.statistics.stepFrames <= 20)
        #expect(report.statistics.crashes > 0 || report.statistics.stepFrames == 20)
        #expect(report.latency.count <= report.statistics.movesSent)
        #expect(report.json.contains("\"steps\":5"))
        #expect(try server.count("games") == 4)
    }

    @Test func aBoundedTestOfNoStepsQuitsEachGameAsItStarts() throws {
        let server = try RunningGameServer()
        let tokens = try seedPlayers(3, in: server)
        var options = options(server, tokens: tokens, connections: 3)
        options.steps = 0
        options.holdSeconds = 60
        let report = try LoadGenerator(options: options).run()
        #expect(!report.interrupted)
        #expect(report.statistics.gamesStarted == 3 && report.statistics.gamesEnded == 3)
        #expect(report.statistics.stepFrames == 0 && report.statistics.movesSent == 0)
        #expect(report.statistics.serverErrors.isEmpty, "errors: \(report.statistics.serverErrors)")
        #expect(try server.count("games") == 3)
    }

    @Test func countsPlayersTheServerTurnsAway() throws {
        let server = try RunningGameServer()
        var tokens = try seedPlayers(2, in: server)
        tokens.append("not-a-real-token-at-all-aaaaaaaaaaaaaaaaaaaa")
        var options = options(server, tokens: tokens, connections: 3)
        options.holdSeconds = 1
        options.settleSeconds = 0
        let report = try LoadGenerator(options: options).run()
        #expect(report.connectionsHeld == 2)
        // The bad token is refused with `unauthorized` and closed with 4401 (docs/PROTOCOL.md),
        // during the ramp, so before the window; the peak counts only players signed in.
        #expect(report.peakConnections == 2)
    }
}
