import Foundation
import RetroRapidBots
import RetroRapidDomain
import RetroRapidRules
import RetroRapidSQLite
import RetroRapidSQL
import Testing
@testable import RetroRapidServer

/// Replays and ghost races through a whole `GameServer` and real WebSocket clients on loopback
/// (`ReplayHost`, docs/PROTOCOL.md "Replays and ghosts"): a replay match lives exactly as long
/// as its watcher (one per connection), a ghost race's match goes with its player's game, and
/// today's daily games of other players stay hidden.
@Suite("Replays", .serialized)
struct ReplayHostTests {
    private func signedIn(_ server: RunningGameServer, _ token: String) throws -> TestGameSocket {
        let socket = try TestGameSocket(port: server.port)
        try socket.send(["type": "hello", "token": token])
        _ = try socket.next("welcome")
        return socket
    }

    /// Stores a game a bot played on `seed`, as the game side would: its public id.
    @discardableResult
    private func store(_ server: RunningGameServer, player: String, seed: UInt64, road: GameRoad = .random,
                       startedAt: Date = Date().addingTimeInterval(-60), practice: Bool = false) throws -> String {
        var bot = RandomBot(seed: seed)
        let (result, game) = Simulation.play(seed: seed, level: .rapid, maxSteps: 200, bot: &bot)
        let publicID = String(format: "%016llx", seed &* 0x9E37_79B9)
        try SQLGameRepository(executor: SQLiteExecutor(database: server.database())).record(NewGame(
            publicID: publicID, playerID: try server.playerRowID(publicID: player), level: .rapid, seed: seed,
            inputLog: game.log, score: result.score, steps: result.steps, endReason: result.survived ? .abandoned : .crash,
            practice: practice, startedAt: startedAt, endedAt: startedAt.addingTimeInterval(30), durationMilliseconds: 20_000,
            road: road))
        return publicID
    }

    /// The last value of `key` logged with `message`, waiting up to 5 s for one equal to `value`.
    private func logged(_ server: RunningGameServer, _ message: String, _ key: String, becomes value: String) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if server.logs.records.last(where: { $0.message == message })?.metadata[key] == value { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    @Test func aReplayLivesAsLongAsItsWatcherAndAConnectionHoldsOne() throws {
        let server = try RunningGameServer()
        defer { server.server.stop() }
        let ada = try server.createPlayer("Ada")
        let first = try store(server, player: ada.id, seed: 11)
        let second = try store(server, player: ada.id, seed: 12)
        let viewer = try signedIn(server, try server.createPlayer("Bo").token)

        try viewer.send(["type": "replay", "gameId": first])
        let replaying = try viewer.next("replaying")
        #expect(replaying["gameId"] as? String == first)
        #expect((replaying["player"] as? [String: Any])?["name"] as? String == "Ada")
        #expect(logged(server, "replaying a game", "replays.running", becomes: "1"))
        // A second replay on the same connection replaces the first: still one.
        try viewer.send(["type": "replay", "gameId": second])
        #expect(try viewer.next("replaying")["gameId"] as? String == second)
        #expect(logged(server, "replay dropped: nobody watches it", "game.id", becomes: first))
        #expect(logged(server, "replaying a game", "game.id", becomes: second))
        #expect(server.logs.records.last { $0.message == "replaying a game" }?.metadata["replays.running"] == "1")
        // Its frames come, and only its own.
        let step = try viewer.next("step")
        #expect(step["step"] as? Int == 1)
        // stopWatching drops it.
        try viewer.send(["type": "stopWatching"])
        #expect(try viewer.next("watchEnded")["reason"] as? String == "stopped")
        #expect(logged(server, "replay dropped: nobody watches it", "replays.running", becomes: "0"))

        // A connection that goes away takes its replay with it.
        try viewer.send(["type": "replay", "gameId": first])
        _ = try viewer.next("replaying")
        #expect(logged(server, "replaying a game", "replays.running", becomes: "1"))
        viewer.close()
        #expect(logged(server, "replay dropped: nobody watches it", "replays.running", becomes: "0"))
    }

    @Test func aGhostRaceEndsWithItsPlayersGameAndLeavesNothingBehind() throws {
        let server = try RunningGameServer()
        defer { server.server.stop() }
        let ada = try server.createPlayer("Ada")
        let stored = try store(server, player: ada.id, seed: 21)
        let racer = try signedIn(server, ada.token)
        try racer.send(["type": "raceGhost", "gameId": stored])
        let started = try racer.next("started")
        let game = try #require(started["game"] as? [String: Any])
        let ghost = try #require(game["ghost"] as? [String: Any])
        #expect(ghost["gameId"] as? String == stored && ghost["name"] as? String == "Ada")
        #expect(game["practice"] as? Bool == true)
        let ghostStep = try racer.next("ghost")
        #expect(ghostStep["step"] as? Int == 1)
        // A second ghost race or a game while this one runs: refused.
        try racer.send(["type": "raceGhost", "gameId": stored])
        #expect(try racer.next("error")["code"] as? String == "game_in_progress")
        try racer.send(["type": "quit"])
        let over = try racer.next("gameOver")
        #expect(over["practice"] as? Bool == true && over["gameId"] as? String == game["gameId"] as? String)
        #expect(logged(server, "ghost race over", "ghost.races.running", becomes: "0"))
        // Stored as practice, its running row gone.
        #expect(try server.count("running_games") == 0)
        // And racing it again works.
        try racer.send(["type": "raceGhost", "gameId": stored])
        _ = try racer.next("started")
        #expect(logged(server, "ghost race started", "game.ghost", becomes: stored))
    }

    @Test func todaysDailyGamesOfOthersAreHiddenUntilTheDayEnds() throws {
        let server = try RunningGameServer()
        defer { server.server.stop() }
        let ada = try server.createPlayer("Ada")
        let bo = try server.createPlayer("Bo")
        let now = Date()
        let today = try store(server, player: ada.id, seed: 31, road: .daily(UTCDay(containing: now)), startedAt: now.addingTimeInterval(-1),
                              practice: true)
        let yesterdayStart = UTCDay(containing: now).start.addingTimeInterval(-3600)
        let yesterday = try store(server, player: ada.id, seed: 32, road: .daily(UTCDay(containing: yesterdayStart)),
                                  startedAt: yesterdayStart, practice: true)
        let viewer = try signedIn(server, bo.token)
        for type in ["replay", "raceGhost"] {
            try viewer.send(["type": type, "gameId": today])
            let refused = try viewer.next("error")
            #expect(refused["code"] as? String == "replay_hidden" && refused["inReplyTo"] as? String == type)
            #expect((refused["message"] as? String)?.contains(UTCDay(containing: now).text) == true)
        }
        // Yesterday's is no secret any more.
        try viewer.send(["type": "replay", "gameId": yesterday])
        #expect(try viewer.next("replaying")["gameId"] as? String == yesterday)
        // Ada may replay her own game of today.
        let own = try signedIn(server, ada.token)
        try own.send(["type": "replay", "gameId": today])
        #expect(try own.next("replaying")["gameId"] as? String == today)
    }
}
