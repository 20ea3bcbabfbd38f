#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

/// Games across two nodes: two whole `GameServer`s in this process on one SQLite file, joined by
/// an in-process bus, spoken to by real WebSocket clients on loopback. A game moves to the node
/// its player comes back through, paused at the same step with the same moves; a start there
/// gets the one-game answer; a node that dies (its database and bus cut, nothing stored) loses
/// its game only to the node that takes it from the last checkpoint once its lease has lapsed.
@Suite("Games moving between cluster nodes", .serialized)
struct ClusterGameHandoffTests {
    /// A node on `network`, on `databasePath` if given (else its own new file), or on the
    /// PostgreSQL database `postgres`.
    private func node(_ id: String, on network: InProcessClusterNetwork, databasePath: String? = nil, postgres: TestPostgresDatabase? = nil,
                      clock: MovableClock? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> RunningGameServer {
        try RunningGameServer { options in
            if let databasePath { options.configuration.databasePath = databasePath }
            if let postgres { options.configuration.databaseURL = try! DatabaseURL(parsing: postgres.url) }
            options.configuration.checkpointIntervalMilliseconds = 200
            configure(&options.configuration)
            options.clusterBus = network.bus(nodeID: id)
            if let clock { options.clock = { clock.now } }
        }
    }

    /// Signs in on `server`: the welcome.
    @discardableResult
    private func signIn(_ socket: TestGameSocket, token: String) throws -> [String: Any] {
        try socket.send(["type": "hello", "token": token])
        return try socket.next("welcome")
    }

    /// Starts a rapid game, moves left once, lets two steps go by and pauses: the game's id and
    /// the step and lane it stands at.
    private func startAndPause(_ socket: TestGameSocket) throws -> (gameID: String, step: Int, lane: Int) {
        try socket.send(["type": "start", "level": "rapid"])
        let started = try socket.next("started")
        let game = try #require(started["game"] as? [String: Any])
        let gameID = try #require(game["gameId"] as? String)
        var step = try #require(game["step"] as? Int)
        try socket.send(["type": "move", "direction": "left", "step": step])
        for _ in 0..<2 { step = try #require(try socket.next("step")["step"] as? Int) }
        try socket.send(["type": "pause"])
        let paused = try socket.next("paused", collecting: { if $0["type"] as? String == "step", let s = $0["step"] as? Int { step = s } })
        #expect(paused["reason"] as? String == "player")
        return (gameID, step, 0)
    }

    /// Plays a game on node `a` as `token` until it is paused and its last step is in the
    /// checkpoint, then kills `a`: nothing it does reaches the database or the other nodes any
    /// more, and its player's connection drops. The game's id and the step and lane it stands at.
    private func gameLeftOnDeadNode(_ a: RunningGameServer, on network: InProcessClusterNetwork, token: String,
                                    beforeDeath: () throws -> Void = {}) throws -> (gameID: String, step: Int, lane: Int) {
        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: token)
        let (gameID, step, lane) = try startAndPause(first)
        // The paused game's last changes reach the checkpoint within an interval (200 ms).
        #expect(try eventually(5) {
            try a.database().prepare("SELECT max(steps) FROM game_checkpoints WHERE public_id = ?").query([gameID]) { $0.int(at: 0) }.first == step
        })
        try beforeDeath()
        a.server.worker.shutdown()
        network.cut(nodeID: "a")
        first.close()
        return (gameID, step, lane)
    }

    private func storedGames(_ server: RunningGameServer, _ gameID: String) throws -> [(reason: String, steps: Int, refunded: Bool)] {
        try server.database().prepare("SELECT end_reason, steps, play_refunded FROM games WHERE public_id = ?")
            .query([gameID]) { ($0.string(at: 0), $0.int(at: 1), $0.bool(at: 2)) }
    }

    /// Waits (at most `seconds`) until `condition` holds; whether it did.
    private func eventually(_ seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    @Test func aGameLeftOnOneNodeIsResumedThroughTheOtherPausedWhereItStoodAndStoredOnce() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let b = try node("b", on: network, databasePath: a.databasePath)
        defer { b.server.stop(); a.server.stop() }
        let player = try a.createPlayer("Ada")

        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: player.token)
        let (gameID, step, lane) = try startAndPause(first)
        first.close()

        let second = try TestGameSocket(port: b.port)
        let welcome = try signIn(second, token: player.token)
        // B knows of the game from the database: offered as resumable, paused.
        let resumable = try #require(welcome["resumable"] as? [String: Any], "welcome on B: \(welcome)")
        #expect(resumable["gameId"] as? String == gameID && resumable["paused"] as? Bool == true)
        try second.send(["type": "resume"])
        let snapshot = try #require(try second.next("snapshot")["game"] as? [String: Any])
        #expect(snapshot["gameId"] as? String == gameID)
        #expect(snapshot["step"] as? Int == step && snapshot["lane"] as? Int == lane && snapshot["paused"] as? Bool == true)
        #expect(try second.next("resumed")["nextStepInMs"] as? Int != nil)
        // Played on B to its end (no more moves: the next car in lane 0 ends it).
        let over = try second.next("gameOver", timeout: 30)
        let result = over
        #expect(result["gameId"] as? String == gameID && result["saved"] as? Bool == true, "\(over)")
        let stored = try storedGames(a, gameID)
        #expect(stored.count == 1 && stored.first?.reason == "crash" && (stored.first?.steps ?? 0) > step)
        #expect(try a.count("running_games") == 0 && a.count("game_holders") == 0)
        #expect(a.logs.records.contains { $0.message == "game handed to another node" })
        #expect(b.logs.records.contains { $0.message == "game taken over from its checkpoint" })
    }

    @Test(.enabled(if: TestPostgresDatabase.adminURL != nil, "needs RETRORAPID_TEST_POSTGRES_URL"))
    func onPostgreSQLAGameMovesToTheOtherNodeAndADeadNodesGameIsTakenAfterItsLease() throws {
        let database = try TestPostgresDatabase()
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network, postgres: database)
        let clock = MovableClock()
        let b = try node("b", on: network, postgres: database, clock: clock)
        let c = try node("c", on: network, postgres: database)
        defer { c.server.stop(); b.server.stop(); a.server.stop() }
        let ada = try a.createPlayer("Ada")
        let bob = try a.createPlayer("Bob")

        // Ada's game moves from A to C when she comes back through C.
        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: ada.token)
        let (adaGame, adaStep, _) = try startAndPause(first)
        first.close()
        let onC = try TestGameSocket(port: c.port)
        try signIn(onC, token: ada.token)
        try onC.send(["type": "resume"])
        #expect((try onC.next("snapshot")["game"] as? [String: Any])?["step"] as? Int == adaStep)
        #expect(try onC.next("gameOver", timeout: 30)["saved"] as? Bool == true)

        // Bob's game is on A when A dies; B takes it once A's lease has lapsed by B's clock.
        let bobOnA = try TestGameSocket(port: a.port)
        try signIn(bobOnA, token: bob.token)
        let (bobGame, bobStep, _) = try startAndPause(bobOnA)
        // A node writes its rounds as slices of its process: a line per game, "<length>:<id> <steps> …".
        #expect(try eventually(5) {
            try database.rows("SELECT count(*) > 0 FROM checkpoint_slices WHERE data LIKE '%16:\(bobGame) \(bobStep) %'") == [["t"]]
        })
        a.server.worker.shutdown()
        network.cut(nodeID: "a")
        bobOnA.close()
        clock.advance(by: ClusterLease.standard.lease + 2)
        let onB = try TestGameSocket(port: b.port)
        try signIn(onB, token: bob.token)
        try onB.send(["type": "resume"])
        #expect((try onB.next("snapshot", timeout: 10)["game"] as? [String: Any])?["step"] as? Int == bobStep)
        try onB.send(["type": "quit"])
        #expect(try onB.next("gameOver")["saved"] as? Bool == true)

        let stored = try database.rows("SELECT public_id, end_reason FROM games ORDER BY public_id")
        #expect(stored.sorted { $0[0] < $1[0] } == [[adaGame, "crash"], [bobGame, "abandoned"]].sorted { $0[0] < $1[0] })
        #expect(try database.rows("SELECT count(*) FROM running_games") == [["0"]])
    }

    @Test func quitThroughTheOtherNodeEndsTheGameThereAndStoresItOnce() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let b = try node("b", on: network, databasePath: a.databasePath)
        defer { b.server.stop(); a.server.stop() }
        let player = try a.createPlayer("Ada")

        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: player.token)
        let (gameID, step, _) = try startAndPause(first)
        first.close()

        let second = try TestGameSocket(port: b.port)
        try signIn(second, token: player.token)
        try second.send(["type": "quit"])
        let over = try second.next("gameOver")
        let result = over
        #expect(result["gameId"] as? String == gameID && result["reason"] as? String == "abandoned" && result["saved"] as? Bool == true)
        let stored = try storedGames(a, gameID)
        #expect(stored.count == 1 && stored.first?.reason == "abandoned" && stored.first?.steps == step)
        // The game is gone from A too: the player starts a new one there.
        let again = try TestGameSocket(port: a.port)
        try signIn(again, token: player.token)
        try again.send(["type": "start", "level": "cruise"])
        #expect(try again.next("started")["game"] != nil)
    }

    @Test func aStartOnTheOtherNodeWhileTheGameRunsGetsTheOneGameAnswerAndAResumeTakesItOver() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let player = try a.createPlayer("Ada")
        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: player.token)
        try first.send(["type": "start", "level": "cruise"])
        let gameID = try #require((try first.next("started")["game"] as? [String: Any])?["gameId"] as? String)
        // B starts while A's game runs: its start-up must leave A's game alone.
        let b = try node("b", on: network, databasePath: a.databasePath)
        defer { b.server.stop(); a.server.stop() }
        #expect(try a.count("running_games") == 1)

        let second = try TestGameSocket(port: b.port)
        try signIn(second, token: player.token)
        try second.send(["type": "start", "level": "cruise"])
        let refusal = try second.next("error")
        #expect(refusal["code"] as? String == "game_in_progress" && (refusal["message"] as? String)?.contains(gameID) == true, "\(refusal)")
        #expect(try a.count("plays") == 1)
        #expect(try first.next("step")["step"] != nil)  // still running on A

        // A resume on B takes it from the live connection on A, which is told so.
        try second.send(["type": "resume"])
        let detached = try first.next("detached")
        #expect(detached["gameId"] as? String == gameID)
        #expect((try second.next("snapshot")["game"] as? [String: Any])?["gameId"] as? String == gameID)
        #expect(try second.next("resumed")["nextStepInMs"] != nil)
        #expect(try second.next("step")["step"] != nil)
    }

    @Test func aSecondProcessWithALiveNodesIDIsRefusedAtStart() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        defer { a.server.stop() }
        let refused = #expect(throws: ClusterNodeInUseError.self) {
            _ = try node("a", on: network, databasePath: a.databasePath)
        }
        #expect(refused?.nodeID == "a")
    }

    @Test func aDeadNodesGameIsTakenFromItsLastCheckpointOnceItsLeaseHasLapsed() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let clock = MovableClock()
        let b = try node("b", on: network, databasePath: a.databasePath, clock: clock)
        defer { b.server.stop(); a.server.stop() }
        let player = try a.createPlayer("Ada")
        let (gameID, step, lane) = try gameLeftOnDeadNode(a, on: network, token: player.token)

        let second = try TestGameSocket(port: b.port)
        try signIn(second, token: player.token)
        try second.send(["type": "resume"])
        // Within A's lease B only asks, and waits.
        #expect(throws: TestHTTPError.self) { try second.next("snapshot", timeout: 1.5) }
        // A's heartbeat is older than the lease from B's clock: B takes the game.
        clock.advance(by: ClusterLease.standard.lease + 2)
        let snapshot = try #require(try second.next("snapshot", timeout: 10)["game"] as? [String: Any])
        #expect(snapshot["gameId"] as? String == gameID && snapshot["step"] as? Int == step && snapshot["lane"] as? Int == lane)
        #expect(try second.next("resumed")["nextStepInMs"] != nil)
        let over = try second.next("gameOver", timeout: 30)
        let result = over
        #expect(result["gameId"] as? String == gameID && result["saved"] as? Bool == true)
        #expect(try storedGames(b, gameID).count == 1)
    }

    @Test func aSecondResumeWhileTheGameIsOnItsWayTakesItAndTheFirstConnectionIsToldWhy() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let clock = MovableClock()
        let b = try node("b", on: network, databasePath: a.databasePath, clock: clock)
        defer { b.server.stop(); a.server.stop() }
        let player = try a.createPlayer("Ada")
        // A dies: B's fetch of the game waits for A's lease.
        let (gameID, step, _) = try gameLeftOnDeadNode(a, on: network, token: player.token)
        let older = try TestGameSocket(port: b.port)
        try signIn(older, token: player.token)
        try older.send(["type": "resume"])
        #expect(throws: TestHTTPError.self) { try older.next("snapshot", timeout: 0.5) }
        // A newer connection asks too: it takes the fetch, and the older one hears why at once.
        let newer = try TestGameSocket(port: b.port)
        try signIn(newer, token: player.token)
        try newer.send(["type": "resume"])
        let taken = try older.next("error")
        #expect(taken["code"] as? String == "game_taken" && taken["inReplyTo"] as? String == "resume", "\(taken)")
        // Asking again on the same connection is told its answer is coming.
        try newer.send(["type": "resume"])
        let pending = try newer.next("error")
        #expect(pending["code"] as? String == "resume_pending" && pending["inReplyTo"] as? String == "resume", "\(pending)")
        // Past A's lease the game comes to the newer connection only.
        clock.advance(by: ClusterLease.standard.lease + 2)
        #expect((try newer.next("snapshot", timeout: 10)["game"] as? [String: Any])?["gameId"] as? String == gameID)
        #expect(try newer.next("resumed")["nextStepInMs"] != nil)
        let olderHeard = try older.messages(for: 1).compactMap { $0["type"] as? String }
        #expect(!olderHeard.contains("snapshot") && !olderHeard.contains("error"), "\(olderHeard)")
        try newer.send(["type": "quit"])
        #expect(try newer.next("gameOver")["saved"] as? Bool == true)
        #expect(try storedGames(b, gameID).map(\.reason) == ["abandoned"])
    }

    @Test func resumesOfOneGameAtOnceOnTwoNodesLeaveItWithOneConnectionAndNoneIsToldTheDatabaseFailed() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let b = try node("b", on: network, databasePath: a.databasePath)
        let c = try node("c", on: network, databasePath: a.databasePath)
        defer { c.server.stop(); b.server.stop(); a.server.stop() }
        let player = try a.createPlayer("Ada")
        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: player.token)
        let (gameID, _, _) = try startAndPause(first)
        first.close()
        // Several rounds: each time the game is on some node, and three connections on the other
        // two ask for it at once (two on one node, one on the other).
        var holderPort = a.port
        for round in 0..<4 {
            let others = [a.port, b.port, c.port].filter { $0 != holderPort }
            let sockets = try [others[0], others[0], others[1]].map { port in
                let socket = try TestGameSocket(port: port, readWaitMicroseconds: 10_000)
                try signIn(socket, token: player.token)
                return (port, socket)
            }
            for (_, socket) in sockets { try socket.send(["type": "resume"]) }
            // Read all three in turn; whoever gets the game pauses it at once (the next step
            // is a whole interval away), so it never runs into the car ahead meanwhile.
            var heard = Array(repeating: [[String: Any]](), count: sockets.count)
            let deadline = Date().addingTimeInterval(4)
            while Date() < deadline {
                for (index, (_, socket)) in sockets.enumerated() {
                    guard let message = try socket.nextMessage() else { continue }
                    heard[index].append(message)
                    if message["type"] as? String == "resumed" { try socket.send(["type": "pause"]) }
                }
            }
            var holders: [Int] = []
            for (index, messages) in heard.enumerated() {
                let types = messages.compactMap { $0["type"] as? String }
                // Refusals: the resume taken over by a newer one; a pause sent just as the game moved on.
                let refusals = messages.filter { $0["type"] as? String == "error" }.map { "\($0["code"] ?? "?")/\($0["inReplyTo"] ?? "?")" }
                #expect(refusals.allSatisfy { $0 == "game_taken/resume" || $0 == "no_game/pause" }, "round \(round): \(messages)")
                // Holding it: taken back, and not passed on since.
                if let resumed = types.lastIndex(of: "resumed"), !types[resumed...].contains("detached") { holders.append(index) }
                else { #expect(refusals.contains("game_taken/resume") || types.contains("detached"), "round \(round): \(messages)") }
            }
            #expect(holders.count == 1, "round \(round): \(heard.map { $0.compactMap { "\($0["type"] ?? "")/\($0["code"] ?? "")" } })")
            guard let holder = holders.first else { break }
            #expect(heard[holder].contains { $0["type"] as? String == "paused" })
            holderPort = sockets[holder].0
            for (_, socket) in sockets { socket.close() }
        }
        // One node runs it, none took it from another behind its back; quit ends it once.
        for node in [a, b, c] {
            #expect(!node.logs.records.contains { $0.message.hasPrefix("a game this node ran was taken by another node") })
        }
        #expect(try a.count("game_holders") == 1)
        let last = try TestGameSocket(port: holderPort)
        try signIn(last, token: player.token)
        try last.send(["type": "quit"])
        #expect(try last.next("gameOver", timeout: 10)["saved"] as? Bool == true)
        #expect(try storedGames(a, gameID).map(\.reason) == ["abandoned"])
    }

    @Test func aStalledNodeWhoseGameWasTakenDropsItAndNeverStoresIt() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let clock = MovableClock()
        let b = try node("b", on: network, databasePath: a.databasePath, clock: clock)
        defer { b.server.stop() }
        let player = try a.createPlayer("Ada")
        let first = try TestGameSocket(port: a.port)
        try signIn(first, token: player.token)
        let (gameID, _, _) = try startAndPause(first)
        // A is alive but cut off from the bus, and B's clock says A's lease has lapsed.
        network.cut(nodeID: "a")
        clock.advance(by: ClusterLease.standard.lease + 2)
        let second = try TestGameSocket(port: b.port)
        try signIn(second, token: player.token)
        try second.send(["type": "resume"])
        #expect((try second.next("snapshot", timeout: 10)["game"] as? [String: Any])?["gameId"] as? String == gameID)
        // A's next heartbeat finds the game held by B: A lets go of it, and its player is told.
        #expect(try first.next("detached", timeout: 10)["gameId"] as? String == gameID)
        #expect(a.logs.records.contains { $0.message.hasPrefix("a game this node ran was taken by another node") })
        try second.send(["type": "quit"])
        #expect(try second.next("gameOver")["saved"] as? Bool == true)
        // A's graceful stop stores nothing of it: the game is stored once, by B.
        a.server.stop()
        #expect(try storedGames(b, gameID).map(\.reason) == ["abandoned"])
    }

    @Test func aDeadNodesGameNobodyTakesBackIsStoredAsServerCrashWithItsPlayGivenBack() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let player = try a.createPlayer("Ada")
        let (gameID, step, _) = try gameLeftOnDeadNode(a, on: network, token: player.token) { () throws in
            let plays = try a.count("plays")
            #expect(plays == 1)
        }
        // B comes up later, past A's lease and the disconnect grace, and its sweep finds the game.
        let clock = MovableClock()
        clock.advance(by: ClusterLease.standard.lease + 3)
        let b = try node("b", on: network, databasePath: a.databasePath, clock: clock) { $0.disconnectGraceSeconds = 1 }
        defer { b.server.stop(); a.server.stop() }
        #expect(try eventually(10) { try storedGames(b, gameID).count == 1 })
        let stored = try storedGames(b, gameID)
        #expect(stored.first?.reason == "server_crash" && stored.first?.steps == step && stored.first?.refunded == true)
        #expect(try b.count("plays") == 0 && b.count("running_games") == 0)
    }
}

// MARK: - A PostgreSQL database for a test

/// A new database on the test server (RETRORAPID_TEST_POSTGRES_URL), made and read with `psql`
/// (this target does not link libpq), dropped when the test is done.
final class TestPostgresDatabase {
    static var adminURL: String? { ProcessInfo.processInfo.environment["RETRORAPID_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 } }

    let url: String
    private let name: String

    init() throws {
        guard let admin = Self.adminURL, var components = URLComponents(string: admin) else {
            throw TestHTTPError("RETRORAPID_TEST_POSTGRES_URL is not set")
        }
        name = "rr_cluster_" + UUID().uuidString.prefix(8).lowercased()
        components.path = "/" + name
        url = components.string!
        _ = try Self.psql(admin, "CREATE DATABASE \(name)")
    }

    deinit {
        if let admin = Self.adminURL { _ = try? Self.psql(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    }

    /// The rows of `query`, each a list of its columns as text.
    func rows(_ query: String) throws -> [[String]] {
        try Self.psql(url, query).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    private static func psql(_ url: String, _ query: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [url, "-qAt", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", query]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestHTTPError("psql failed on: \(query)") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The storage thread's clock, moved by the test.
final class MovableClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(by seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }
}

// MARK: - A WebSocket client

/// One game connection over a plain socket (RFC 6455 by hand: the upgrade, masked text frames
/// out, unmasked frames in), so the tests see exactly what the server sends.
final class TestGameSocket {
    private let fd: Int32
    private var buffered: [UInt8] = []
    /// Messages read while waiting for another type.
    private var pending: [[String: Any]] = []

    /// `readWaitMicroseconds`: how long one read waits for bytes (short for a test that
    /// answers several sockets in turn).
    init(port: Int, readWaitMicroseconds: Int = 200_000) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 0, tv_usec: readWaitMicroseconds)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let code = TestHTTPConnection.connect(fd, port: port)
        guard code == 0 else { throw TestHTTPError("connect: \(String(cString: strerror(code)))") }
        try write(Array("""
            GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
            Sec-WebSocket-Protocol: \(WebSocketLimits.subprotocol)\r\n\r\n
            """.utf8))
        let deadline = Date().addingTimeInterval(5)
        while !buffered.containsSequence(Array("\r\n\r\n".utf8)) {
            guard Date() < deadline else { throw TestHTTPError("no upgrade answer") }
            try fill()
        }
        let end = buffered.indexOfSequence(Array("\r\n\r\n".utf8))!
        let head = String(decoding: buffered[..<end], as: UTF8.self)
        buffered.removeFirst(end + 4)
        guard head.hasPrefix("HTTP/1.1 101") else { throw TestHTTPError("upgrade refused: \(head)") }
    }

    deinit {
        Glibc.close(fd)
    }

    /// Drops the connection without a close frame (as a lost network does).
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    func send(_ object: [String: Any]) throws {
        let payload = Array(try JSONSerialization.data(withJSONObject: object))
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try write(frame)
    }

    /// The next message of `type` (earlier ones of other types are kept in `pending`, and
    /// shown to `collecting`); fails after `timeout` seconds.
    func next(_ type: String, timeout: Double = 5, collecting: ([String: Any]) -> Void = { _ in }) throws -> [String: Any] {
        if let index = pending.firstIndex(where: { $0["type"] as? String == type }) {
            return pending.remove(at: index)
        }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let message = try readMessage() else { continue }
            if message["type"] as? String == type { return message }
            collecting(message)
            pending.append(message)
        }
        throw TestHTTPError("no \(type) within \(timeout) s; got \(pending.map { $0["type"] ?? "?" })")
    }

    /// Every message that comes within `seconds` (after those kept in `pending`), in order.
    func messages(for seconds: Double) throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let message = try nextMessage() { all.append(message) }
        }
        return all
    }

    /// The next message (one kept in `pending` first), or nil if none came within one read's wait.
    func nextMessage() throws -> [String: Any]? {
        if !pending.isEmpty { return pending.removeFirst() }
        return try readMessage()
    }

    /// One text message, or nil when none came within the socket's short timeout.
    private func readMessage() throws -> [String: Any]? {
        while true {
            if let (opcode, payload) = takeFrame() {
                switch opcode {
                case 0x1: return (try JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
                case 0x8: throw TestHTTPError("closed by the server: \(payload)")
                default: continue  // ping/pong: the server's watchdog does not need answers here
                }
            }
            guard try fill() else { return nil }
        }
    }

    private func takeFrame() -> (UInt8, [UInt8])? {
        guard buffered.count >= 2 else { return nil }
        var length = Int(buffered[1] & 0x7f)
        var offset = 2
        if length == 126 {
            guard buffered.count >= 4 else { return nil }
            length = Int(buffered[2]) << 8 | Int(buffered[3])
            offset = 4
        } else if length == 127 {
            guard buffered.count >= 10 else { return nil }
            length = buffered[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard buffered.count >= offset + length else { return nil }
        let frame = (buffered[0] & 0x0f, Array(buffered[offset..<offset + length]))
        buffered.removeFirst(offset + length)
        return frame
    }

    /// Reads what is there; false on the socket's timeout.
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffered += chunk[..<n]
            return true
        }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
        throw TestHTTPError("connection closed")
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestHTTPError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}

private extension Array where Element == UInt8 {
    func indexOfSequence(_ needle: [UInt8]) -> Int? {
        guard count >= needle.count else { return nil }
        return (0...(count - needle.count)).first { Array(self[$0..<$0 + needle.count]) == needle }
    }

    func containsSequence(_ needle: [UInt8]) -> Bool { indexOfSequence(needle) != nil }
}
