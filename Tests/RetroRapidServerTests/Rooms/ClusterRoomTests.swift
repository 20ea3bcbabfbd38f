import Foundation
import RetroRapidSupport
import Testing
@testable import RetroRapidServer

/// Race rooms across two nodes: two whole `GameServer`s in this process on one SQLite file,
/// joined by an in-process bus, spoken to by real WebSocket clients on loopback. A room lives
/// on the node its opener reached: the other node sends joiners there (`room_elsewhere`), names
/// that node over HTTP, and sends a racer who comes back through it to the race's node
/// (`game_elsewhere`), since a race's games never move while it runs.
@Suite("Race rooms across cluster nodes", .serialized)
struct ClusterRoomTests {
    private func node(_ id: String, on network: InProcessClusterNetwork, databasePath: String? = nil) throws -> RunningGameServer {
        try RunningGameServer { options in
            if let databasePath { options.configuration.databasePath = databasePath }
            options.configuration.raceCountdownSeconds = 0
            options.clusterBus = network.bus(nodeID: id)
        }
    }

    private func signedIn(_ port: Int, _ token: String) throws -> TestGameSocket {
        let socket = try TestGameSocket(port: port)
        try socket.send(["type": "hello", "token": token])
        _ = try socket.next("welcome")
        return socket
    }

    @Test func aRoomOnOneNodeIsFoundFromTheOtherAndItsRacersAreSentToIt() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        let b = try node("b", on: network, databasePath: a.databasePath)
        defer { b.server.stop(); a.server.stop() }
        let ada = try a.createPlayer("Ada")
        let bo = try a.createPlayer("Bo")
        let cy = try a.createPlayer("Cy")

        let host = try signedIn(a.port, ada.token)
        try host.send(["type": "openRoom", "level": "cruise", "seats": 3])
        let room = try #require(try host.next("room")["room"] as? [String: Any])
        let code = try #require(room["code"] as? String)
        #expect(try a.database().prepare("SELECT node_id FROM room_places WHERE code = ?").query([code]) { $0.string(at: 0) } == ["a"])

        // Through B: the room is A's.
        let fromB = try b.request("GET", "/api/v1/rooms/\(code)")
        #expect(fromB.status == 200)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(fromB.body)) as? [String: Any])
        #expect(body["code"] as? String == code && body["node"] as? String == "a" && body["level"] is NSNull)
        let joinerOnB = try signedIn(b.port, cy.token)
        try joinerOnB.send(["type": "joinRoom", "code": code.lowercased()])
        let elsewhere = try joinerOnB.next("error")
        #expect(elsewhere["code"] as? String == "room_elsewhere" && elsewhere["node"] as? String == "a", "\(elsewhere)")
        #expect(elsewhere["inReplyTo"] as? String == "joinRoom")
        try joinerOnB.send(["type": "joinRoom", "code": "ZZZZZZ"])
        #expect(try joinerOnB.next("error")["code"] as? String == "room_not_found")
        let local = try a.request("GET", "/api/v1/rooms/\(code)")
        let localBody = try #require(try JSONSerialization.jsonObject(with: Data(local.body)) as? [String: Any])
        #expect(localBody["node"] as? String == "a" && localBody["level"] as? String == "cruise")

        // A race on A; Bo drops and comes back through B: his game stays on A.
        let racer = try signedIn(a.port, bo.token)
        try racer.send(["type": "joinRoom", "code": code])
        _ = try racer.next("room")
        try racer.send(["type": "ready"])
        _ = try racer.next("room")  // the ready is taken before the start is sent
        try host.send(["type": "startRace"])
        let started = try #require(try racer.next("started")["game"] as? [String: Any])
        #expect(started["race"] as? String == code)
        _ = try host.next("started")
        racer.close()
        let back = try signedIn(b.port, bo.token)
        try back.send(["type": "resume"])
        let stays = try back.next("error", timeout: 15)
        #expect(stays["code"] as? String == "game_elsewhere" && stays["node"] as? String == "a", "\(stays)")
        #expect(stays["inReplyTo"] as? String == "resume")
        // Back through A, he takes it again.
        let again = try signedIn(a.port, bo.token)
        try again.send(["type": "resume"])
        #expect((try again.next("snapshot")["game"] as? [String: Any])?["gameId"] as? String == started["gameId"] as? String)
        try again.send(["type": "quit"])
        try host.send(["type": "quit"])
        _ = try host.next("raceOver", timeout: 15)
        try host.send(["type": "leaveRoom"])
        _ = try host.next("roomLeft")
        try again.send(["type": "leaveRoom"])
        _ = try again.next("roomLeft")
        #expect(try eventually { try a.count("room_places") == 0 })
    }

    /// A node that dies leaves its room codes in `room_places` (it never closed them): a live
    /// node's periodic sweep deletes them, and leaves its own rooms' places alone.
    @Test func theSweepRemovesTheRoomPlacesOfADeadNode() throws {
        let network = InProcessClusterNetwork()
        let a = try node("a", on: network)
        defer { a.server.stop() }
        let ada = try a.createPlayer("Ada")
        let host = try signedIn(a.port, ada.token)
        try host.send(["type": "openRoom", "level": "cruise"])
        let room = try #require(try host.next("room")["room"] as? [String: Any])
        let code = try #require(room["code"] as? String)
        // Node c died long ago (its heartbeat stopped); node d never wrote one.
        let database = try a.database()
        try database.prepare("INSERT INTO cluster_nodes (node_id, instance, started_at, seen_at) VALUES ('c', 'gone', ?1, ?1)")
            .execute(["2020-01-01T00:00:00Z"])
        for (deadCode, node) in [("CCCCCC", "c"), ("DDDDDD", "d")] {
            try database.prepare("INSERT INTO room_places (code, node_id, created_at) VALUES (?, ?, ?)")
                .execute([deadCode, node, "2020-01-01T00:00:00Z"])
        }
        let places = { try a.database().prepare("SELECT code FROM room_places ORDER BY code").query { $0.string(at: 0) } }
        let gone = try eventually(15) { try places() == [code] }
        let left = try places()
        #expect(gone, "room_places still holds \(left)")
    }

    private func eventually(_ seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }
}
