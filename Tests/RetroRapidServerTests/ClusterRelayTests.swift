import Foundation
import RetroRapidDomain
import Synchronization
import Testing
@testable import RetroRapidServer

/// Two whole servers in one process on one SQLite file, joined by an in-process bus: what a
/// player does through one node reaches their devices connected to the other, live, through
/// real HTTP and real game connections.
@Suite("Two nodes on one database")
struct ClusterRelayTests {
    /// Node a and node b: the same database, a bus each on one network.
    final class TwoNodes {
        let network = InProcessClusterNetwork()
        let a: RunningGameServer
        let b: RunningGameServer
        let busA: InProcessClusterBus
        let busB: InProcessClusterBus

        init() throws {
            let busA = network.bus(nodeID: "a"), busB = network.bus(nodeID: "b")
            a = try RunningGameServer { $0.clusterBus = busA }
            let path = a.databasePath
            b = try RunningGameServer { options in
                options.configuration.databasePath = path
                options.clusterBus = busB
            }
            self.busA = busA
            self.busB = busB
        }

        /// A player made on node a with a second device; both tokens and the second's id.
        func playerWithTwoDevices() throws -> (first: String, second: String, secondID: Int64) {
            let first = try a.createPlayer("Ada").token
            let code = try a.request("POST", "/api/v1/link-codes", token: first)
            try #require(code.status == 201, "\(code.text)")
            let claimed = try a.request("POST", "/api/v1/link-codes/claim",
                                        json: RunningGameServer.json(["code": code.json!["code"] as! String, "deviceLabel": "second"]))
            try #require(claimed.status == 201, "\(claimed.text)")
            let devices = try a.request("GET", "/api/v1/devices", token: first).json?["devices"] as? [[String: Any]] ?? []
            let secondID = try #require(devices.first { $0["current"] as? Bool == false }?["id"] as? Int)
            return (first, try #require(claimed.json?["token"] as? String), Int64(secondID))
        }
    }

    @Test func aSettingsWriteOnOneNodeReachesTheOtherDevicesOnTheOtherNodeLive() throws {
        let nodes = try TwoNodes()
        let player = try nodes.playerWithTwoDevices()
        let second = try ClusterWebSocketClient.signedIn(port: nodes.b.port, token: player.second)
        // The writing device is connected to b too: like a write on b, it is not told.
        let writer = try ClusterWebSocketClient.signedIn(port: nodes.b.port, token: player.first)

        let written = try nodes.a.request("PUT", "/api/v1/settings", token: player.first,
                                          json: #"{"cueVolume":40,"theme":"dark"}"#, headers: ["If-Match": #""0""#])
        #expect(written.status == 200, "\(written.text)")

        let pushed = try second.next("settings")
        let document = try #require(pushed["document"] as? [String: Any])
        #expect(document["version"] as? Int == 1)
        let settings = try #require(document["settings"] as? [String: Any])
        #expect(settings["cueVolume"] as? Int == 40)
        #expect(settings["theme"] as? String == "dark")
        // b sent both pushes in one go, before this pong: the writer's next message is the pong.
        try writer.send(["type": "ping"])
        #expect(try writer.nextMessage()["type"] as? String == "pong")

        // Told once, by a; b, which only relayed it, tells nobody (no echo between nodes).
        #expect(nodes.busA.published == [.settingsChanged(playerID: try nodes.a.playerRowID(publicID: try playerID(nodes.a, player.first)),
                                                          deviceID: try deviceID(nodes.a, player.first), version: 1)])
        #expect(nodes.busB.published.isEmpty)
        let metricsA = nodes.a.server.metrics.render(), metricsB = nodes.b.server.metrics.render()
        #expect(metricsA.contains(#"retrorapid_cluster_messages_sent_total{kind="settings"} 1"#), "\(metricsA)")
        #expect(metricsB.contains(#"retrorapid_cluster_messages_received_total{kind="settings"} 1"#), "\(metricsB)")
        #expect(metricsB.contains(#"retrorapid_cluster_messages_sent_total{kind="settings"} 0"#))
        #expect(metricsB.contains("retrorapid_cluster_bus_connected 1"))
        #expect(metricsB.contains("retrorapid_cluster_bus_reconnects_total 0"))
        // Every reason a notification is dropped for shows from the start, at 0.
        for reason in ["unsigned", "bad_signature", "stale", "replayed", "malformed"] {
            #expect(metricsB.contains(#"retrorapid_cluster_bus_rejected_total{reason="\#(reason)"} 0"#), "\(reason)")
        }
        #expect(metricsB.contains("retrorapid_cluster_bus_previous_secret_total 0"))
    }

    @Test func aDeviceRevokedOnOneNodeLosesItsConnectionOnTheOther() throws {
        let nodes = try TwoNodes()
        let player = try nodes.playerWithTwoDevices()
        let revoked = try ClusterWebSocketClient.signedIn(port: nodes.b.port, token: player.second)
        let owner = try ClusterWebSocketClient.signedIn(port: nodes.b.port, token: player.first)

        let answer = try nodes.a.request("DELETE", "/api/v1/devices/\(player.secondID)", token: player.first)
        #expect(answer.status == 200, "\(answer.text)")

        let error = try revoked.next("error")
        #expect(error["code"] as? String == "unauthorized")
        let closed = try revoked.closed()
        #expect(closed.code == 4401, "\(closed)")
        #expect(closed.reason.contains("signed out"))
        // The owner's own connection on b stays open.
        try owner.send(["type": "ping"])
        #expect(try owner.next("pong")["type"] as? String == "pong")
        #expect(nodes.busA.published == [.deviceRevoked(playerID: try nodes.a.playerRowID(publicID: try playerID(nodes.a, player.first)),
                                                        deviceID: player.secondID)])
        #expect(nodes.busB.published.isEmpty)
        #expect(nodes.b.server.metrics.render().contains(#"retrorapid_cluster_messages_received_total{kind="revoked"} 1"#))
    }

    /// What the bus brings is only a hint: the settings pushed are read from the database when
    /// the message arrives, so a node cut off for a while pushes what is stored now.
    @Test func aNodeThatMissedAMessagePushesWhatIsStoredWhenTheNextComes() throws {
        let nodes = try TwoNodes()
        let player = try nodes.playerWithTwoDevices()
        let second = try ClusterWebSocketClient.signedIn(port: nodes.b.port, token: player.second)
        nodes.busB.isConnected = false
        _ = try nodes.a.request("PATCH", "/api/v1/settings", token: player.first, json: #"{"cueVolume":10}"#, headers: ["If-Match": #""0""#])
        nodes.busB.isConnected = true
        _ = try nodes.a.request("PATCH", "/api/v1/settings", token: player.first, json: #"{"theme":"dark"}"#, headers: ["If-Match": #""1""#])
        let document = try #require(try second.next("settings")["document"] as? [String: Any])
        #expect(document["version"] as? Int == 2)
        let settings = try #require(document["settings"] as? [String: Any])
        #expect(settings["cueVolume"] as? Int == 10 && settings["theme"] as? String == "dark")
        #expect(nodes.b.server.metrics.render().contains("retrorapid_cluster_bus_reconnects_total 1"))
    }

    @Test func aMessageFromAnotherNodeForSomeoneNotConnectedHereChangesNothing() throws {
        let nodes = try TwoNodes()
        let heard = Mutex<[ClusterEnvelope]>([])
        nodes.b.server.cluster.subscribe { envelope in heard.withLock { $0.append(envelope) } }
        let stranger = nodes.network.bus(nodeID: "c")
        try stranger.start { _ in }
        defer { stranger.stop() }
        stranger.publishRaw("c|settings|999|1|1")  // no such player
        stranger.publishRaw("c|nonsense")
        stranger.publish(.gameReleased(gameID: "g1", playerID: 999))
        // The observers see the messages in order, after the relay's own handling.
        try waitUntil { heard.withLock { $0.count } == 2 }
        #expect(heard.withLock { $0 }.map(\.message) == [.settingsChanged(playerID: 999, deviceID: 1, version: 1),
                                                         .gameReleased(gameID: "g1", playerID: 999)])
        #expect(nodes.busB.ignoredCount == 1)
        #expect(try nodes.b.request("GET", "/healthz").status == 200)
    }

    @Test func aNodeOnItsOwnHasNoClusterMetrics() throws {
        let server = try RunningGameServer()
        #expect(server.server.cluster.bus == nil)
        #expect(!server.server.metrics.render().contains("retrorapid_cluster"))
    }

    private func playerID(_ server: RunningGameServer, _ token: String) throws -> String {
        let me = try server.request("GET", "/api/v1/me", token: token)
        return try #require((me.json?["player"] as? [String: Any])?["id"] as? String, "\(me.text)")
    }

    private func deviceID(_ server: RunningGameServer, _ token: String) throws -> Int64 {
        let devices = try server.request("GET", "/api/v1/devices", token: token).json?["devices"] as? [[String: Any]] ?? []
        return Int64(try #require(devices.first { $0["current"] as? Bool == true }?["id"] as? Int))
    }

    private func waitUntil(_ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "timed out")
            usleep(10_000)
        }
    }
}
