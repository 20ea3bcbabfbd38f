import Foundation
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

/// Watching through a whole `GameServer` and real WebSocket clients on loopback
/// (`WatchHost`, docs/PROTOCOL.md "Watching"): the cap per game, switching, stopping, the end
/// of the watched game, the count the player hears, and in a cluster the node that has it.
@Suite("Watching", .serialized)
struct WatchingTests {
    private func signedIn(_ server: RunningGameServer, _ token: String) throws -> TestGameSocket {
        let socket = try TestGameSocket(port: server.port)
        try socket.send(["type": "hello", "token": token])
        _ = try socket.next("welcome")
        return socket
    }

    /// Starts a practice game: its id.
    private func start(_ socket: TestGameSocket, level: String = "cruise") throws -> String {
        try socket.send(["type": "start", "level": level, "practice": true])
        let game = try #require(try socket.next("started")["game"] as? [String: Any])
        return try #require(game["gameId"] as? String)
    }

    private func error(_ socket: TestGameSocket) throws -> (code: String?, inReplyTo: String?) {
        let error = try socket.next("error")
        return (error["code"] as? String, error["inReplyTo"] as? String)
    }

    @Test func theCapSwitchingStoppingAndTheEndOfTheWatchedGame() throws {
        let server = try RunningGameServer { $0.configuration.watchersPerGame = 1 }
        defer { server.server.stop() }
        let ada = try signedIn(server, try server.createPlayer("Ada").token)
        let bo = try signedIn(server, try server.createPlayer("Bo").token)
        let first = try signedIn(server, try server.createPlayer("Cy").token)
        let second = try signedIn(server, try server.createPlayer("Di").token)
        let adaGame = try start(ada)
        let boGame = try start(bo)

        try first.send(["type": "watch", "gameId": adaGame])
        let watching = try first.next("watching")
        #expect(watching["gameId"] as? String == adaGame && watching["watchers"] as? Int == 1)
        #expect((watching["player"] as? [String: Any])?["name"] as? String == "Ada")
        #expect(watching["room"] is NSNull)
        #expect((watching["game"] as? [String: Any])?["gameId"] as? String == adaGame)
        // The player hears it.
        let count = try ada.next("watchers")
        #expect(count["gameId"] as? String == adaGame && count["count"] as? Int == 1)

        // One watcher per game here: the second is refused, and nothing changed.
        try second.send(["type": "watch", "gameId": adaGame])
        #expect(try error(second) == ("watchers_full", "watch"))

        // The first switches to Bo's game, which frees Ada's.
        try first.send(["type": "watch", "gameId": boGame])
        #expect(try first.next("watching")["gameId"] as? String == boGame)
        try second.send(["type": "watch", "gameId": adaGame])
        #expect(try second.next("watching")["watchers"] as? Int == 1)

        // Stopping: watchEnded, then nothing to stop.
        try first.send(["type": "stopWatching"])
        let stopped = try first.next("watchEnded")
        #expect(stopped["gameId"] as? String == boGame && stopped["reason"] as? String == "stopped")
        try first.send(["type": "stopWatching"])
        #expect(try error(first) == ("not_watching", "stopWatching"))

        // The player of a game cannot watch on the same connection.
        try ada.send(["type": "watch", "gameId": boGame])
        #expect(try error(ada) == ("game_in_progress", "watch"))

        // Ada quits: her watcher hears the end, with its reason and score; the game is over.
        try ada.send(["type": "quit"])
        let over = try ada.next("gameOver")
        let ended = try second.next("watchEnded")
        #expect(ended["gameId"] as? String == adaGame && ended["reason"] as? String == "abandoned")
        #expect(ended["score"] as? Int == over["score"] as? Int)
        try second.send(["type": "watch", "gameId": adaGame])
        #expect(try error(second) == ("game_over", "watch"))
        try second.send(["type": "watch", "gameId": "00000000000000ff"])
        #expect(try error(second) == ("game_not_found", "watch"))
    }

    @Test func aRoomsSeatIsFoundThroughTheHookTheRoomsFill() throws {
        // A stand-in for the rooms' owner: room K7QXM2 is the match of the game named here.
        let roomGame = Mutex<String?>(nil)
        let server = try RunningGameServer(components: { context in
            let hub = WebSocketHub(context)
            let host = hub.matchHost
            hub.watching.roomSeat = { [unowned host] code, seat in
                guard code == "K7QXM2", let gameID = roomGame.withLock({ $0 }),
                      let (match, first) = host.runningSeat(gameID: gameID) else {
                    return .failure(ProtocolError(.gameNotFound, "No race room has the code \(code)."))
                }
                return .success((match, seat ?? first.address.seat))
            }
            return [hub]
        })
        defer { server.server.stop() }
        let ada = try signedIn(server, try server.createPlayer("Ada").token)
        let watcher = try signedIn(server, try server.createPlayer("Bo").token)
        let game = try start(ada)
        roomGame.withLock { $0 = game }
        try watcher.send(["type": "watch", "room": "K7QXM2"])
        let watching = try watcher.next("watching")
        #expect(watching["gameId"] as? String == game && watching["room"] as? String == "K7QXM2")
        try watcher.send(["type": "watch", "room": "K7QXM2", "seat": 3])
        #expect(try error(watcher) == ("game_not_found", "watch"))
        try watcher.send(["type": "watch", "room": "NOPE99"])
        #expect(try error(watcher) == ("game_not_found", "watch"))
        // Refused watches changed nothing: the first one goes on.
        try ada.send(["type": "quit"])
        #expect(try watcher.next("watchEnded")["gameId"] as? String == game)
    }

    @Test func watchingTurnedOffRefusesEveryWatch() throws {
        let server = try RunningGameServer { $0.configuration.watchersPerGame = 0 }
        defer { server.server.stop() }
        let ada = try signedIn(server, try server.createPlayer("Ada").token)
        let watcher = try signedIn(server, try server.createPlayer("Bo").token)
        let game = try start(ada)
        try watcher.send(["type": "watch", "gameId": game])
        #expect(try error(watcher) == ("watchers_full", "watch"))
    }

    @Test func aWatchForAGameOnAnotherNodeNamesThatNode() throws {
        let network = InProcessClusterNetwork()
        let a = try RunningGameServer { $0.clusterBus = network.bus(nodeID: "a") }
        let b = try RunningGameServer { options in
            options.configuration.databasePath = a.databasePath
            options.clusterBus = network.bus(nodeID: "b")
        }
        defer { b.server.stop(); a.server.stop() }
        let ada = try signedIn(a, try a.createPlayer("Ada").token)
        let game = try start(ada)
        let watcher = try signedIn(b, try a.createPlayer("Bo").token)
        try watcher.send(["type": "watch", "gameId": game])
        let refused = try watcher.next("error")
        #expect(refused["code"] as? String == "watch_elsewhere" && refused["node"] as? String == "a", "\(refused)")
        // On its own node it is watched.
        let there = try signedIn(a, try a.createPlayer("Cy").token)
        try there.send(["type": "watch", "gameId": game])
        #expect(try there.next("watching")["gameId"] as? String == game)
        // Once it ended, the other node knows from the database that it is over.
        try ada.send(["type": "quit"])
        _ = try ada.next("gameOver")
        try watcher.send(["type": "watch", "gameId": game])
        #expect(try error(watcher) == ("game_over", "watch"))
    }
}
