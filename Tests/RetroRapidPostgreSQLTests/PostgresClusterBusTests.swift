import Dispatch
import Foundation
import RetroRapidDomain
@testable import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Synchronization
import Testing

/// The LISTEN/NOTIFY bus against a real server: two nodes on one database, a connection the
/// server terminates, a stop while it waits to reconnect, payloads a stranger sends (unsigned,
/// forged, stale, replayed) and a rotation of the cluster secret.
/// The waits below are bounds on liveness (a message that never comes), never on speed.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresClusterBusTests {
    @Test func twoNodesHearEachOtherInOrderAndNeverThemselves() throws {
        try TestPostgres.withDatabase { url in
            let a = try Node("a", url), b = try Node("b", url)
            defer { a.bus.stop(); b.bus.stop() }

            let fromA = (1...50).map { ClusterMessage.settingsChanged(playerID: 7, deviceID: 1, version: $0) }
            for message in fromA { a.bus.publish(message) }
            try b.waitFor(count: fromA.count)
            // Every one of A's notifications is committed now, so PostgreSQL has queued them
            // for A's own session before any of B's below: A must skip them all.
            let fromB = (1...20).map { ClusterMessage.deviceRevoked(playerID: 8, deviceID: Int64($0)) }
            for message in fromB { b.bus.publish(message) }
            try a.waitFor(count: fromB.count)

            #expect(b.received == fromA.map { ClusterEnvelope(sender: "a", message: $0) })
            #expect(a.received == fromB.map { ClusterEnvelope(sender: "b", message: $0) })
            #expect(a.bus.isConnected && b.bus.isConnected)
            #expect(a.bus.reconnectCount == 0)
        }
    }

    @Test func aConnectionTheServerTerminatesIsMadeAgainAndDeliversAgain() throws {
        try TestPostgres.withDatabase { url in
            let a = try Node("a", url), b = try Node("b", url)
            defer { a.bus.stop(); b.bus.stop() }
            a.bus.publish(.deviceRevoked(playerID: 1, deviceID: 1))
            try b.waitFor(count: 1)

            // A third connection ends every other session on the database: both buses'.
            let admin = try PostgresConnection(conninfo: url)
            let terminated = try admin.execute("""
                SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()) AS ended
                """).first!.int64(at: 0)
            #expect(terminated == 2)
            try waitUntil("both buses reconnect") { a.bus.reconnectCount == 1 && b.bus.reconnectCount == 1 }
            #expect(a.bus.isConnected && b.bus.isConnected)

            a.bus.publish(.deviceRevoked(playerID: 1, deviceID: 2))
            b.bus.publish(.deviceRevoked(playerID: 2, deviceID: 3))
            try b.waitFor(count: 2)
            try a.waitFor(count: 1)
            #expect(b.received.map(\.message) == [.deviceRevoked(playerID: 1, deviceID: 1), .deviceRevoked(playerID: 1, deviceID: 2)])
            #expect(a.received.map(\.message) == [.deviceRevoked(playerID: 2, deviceID: 3)])
            #expect(a.events.contains { if case .connectionLost = $0 { true } else { false } })
            #expect(a.events.contains(.reconnected(attempts: 1)))
        }
    }

    /// The database is gone, so every attempt fails and the bus waits 30 s before the next:
    /// `stop` must end that wait, not sit it out.
    @Test func stopEndsTheWaitBetweenReconnectsAndJoinsTheThread() throws {
        try TestPostgres.withDatabase { url in
            let a = try Node("a", url, backoff: .init(initial: 30, maximum: 60))
            let admin = try PostgresConnection(conninfo: try #require(TestPostgres.adminURL))
            let name = try #require(URLComponents(string: url)?.path.dropFirst())
            try admin.executeScript("DROP DATABASE \(name) WITH (FORCE)")
            try waitUntil("the bus fails to reconnect") {
                a.events.contains { if case .reconnectFailed(_, 30) = $0 { true } else { false } }
            }
            #expect(!a.bus.isConnected)
            a.bus.publish(.deviceRevoked(playerID: 1, deviceID: 1))  // dropped, never blocks

            let stopped = DispatchSemaphore(value: 0)
            let bus = a.bus
            Thread.detachNewThread { bus.stop(); stopped.signal() }
            #expect(stopped.wait(timeout: .now() + 10) == .success, "stop() sat out the 30 s pause")
        }
    }

    @Test func anIdleBusStopsAndHearsNothingAfterwards() throws {
        try TestPostgres.withDatabase { url in
            let a = try Node("a", url), b = try Node("b", url)
            defer { b.bus.stop() }
            let stopped = DispatchSemaphore(value: 0)
            let bus = a.bus
            Thread.detachNewThread { bus.stop(); stopped.signal() }
            #expect(stopped.wait(timeout: .now() + 10) == .success)
            bus.stop()  // again: nothing to do
            #expect(!bus.isConnected)

            // A stopped bus sends nothing and has left the channel: B's message reaches no one.
            a.bus.publish(.deviceRevoked(playerID: 1, deviceID: 1))
            b.bus.publish(.deviceRevoked(playerID: 1, deviceID: 2))
            let admin = try PostgresConnection(conninfo: url)
            try waitUntil("the stopped bus's session is gone") {
                try admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
                    .first!.int64(at: 0) == 1
            }
            #expect(a.received.isEmpty)
            #expect(throws: PostgresError.self) { try a.bus.start { _ in } }
        }
    }

    @Test func whatIsPublishedBeforeStopIsStillSent() throws {
        try TestPostgres.withDatabase { url in
            let a = try Node("a", url), b = try Node("b", url)
            defer { b.bus.stop() }
            let last = (1...10).map { ClusterMessage.gameReleased(gameID: "g\($0)", playerID: 3) }
            for message in last { a.bus.publish(message) }
            a.bus.stop()
            try b.waitFor(count: last.count)
            #expect(b.received.map(\.message) == last)
        }
    }

    /// Any role that can connect may NOTIFY on the channel: only a payload signed with the
    /// cluster secret, fresh and not seen before reaches `receive`; the rest is counted by
    /// reason and reported (one report a second, the others counted in it).
    @Test func onlyAFreshSignedMessageIsDeliveredTheRestIsRejectedAndCounted() throws {
        try TestPostgres.withDatabase { url in
            let a = try Node("a", url)
            defer { a.bus.stop() }
            let stranger = try PostgresConnection(conninfo: url)
            func notify(_ payload: String) throws {
                try stranger.execute("SELECT pg_notify($1, $2)", [PostgresClusterBus.defaultChannel, payload])
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let signer = ClusterSigner(secrets: Node.secrets, channel: PostgresClusterBus.defaultChannel)
            let forger = ClusterSigner(secrets: try ClusterSecrets(current: "not-the-cluster-secret-0123456789abcdef"),
                                       channel: PostgresClusterBus.defaultChannel)
            let revoke = ClusterEnvelope(sender: "b", message: .deviceRevoked(playerID: 1, deviceID: 2))
            func stamp(_ sequence: UInt64, at time: Int64 = now) -> ClusterStamp { ClusterStamp(boot: 77, sequence: sequence, sentAt: time) }

            let unsigned = ["", "hello", "b|", "|revoked|1|2", "b|revoked|1|2", "b|release|g1|1|a", "b|settings|1|2|3",
                            String(repeating: "z", count: 7_000)]
            for payload in unsigned { try notify(payload) }
            try notify(forger.seal(revoke, stamp: stamp(1)))
            try notify(signer.seal(revoke, stamp: stamp(1)).replacingOccurrences(of: "|revoked|1|2", with: "|revoked|1|3"))
            try notify(signer.seal(revoke, stamp: stamp(1, at: now - 2 * ClusterSigner.window)))
            let genuine = signer.seal(revoke, stamp: stamp(1))
            try notify(genuine)
            try notify(genuine)
            try notify(signer.seal(ClusterEnvelope(sender: "a", message: .deviceRevoked(playerID: 1, deviceID: 4)), stamp: stamp(1)))
            try stranger.execute("SELECT pg_notify($1, $2)", ["another_channel", signer.seal(revoke, stamp: stamp(5))])
            let last = ClusterEnvelope(sender: "b", message: .deviceRevoked(playerID: 1, deviceID: 5))
            try notify(signer.seal(last, stamp: stamp(2)))
            try a.waitFor(count: 2)
            // One session's notifications arrive in order: everything before the last has been
            // seen by now.
            #expect(a.received == [revoke, last])
            #expect(a.bus.rejectedCount(.unsigned) == unsigned.count)
            #expect(a.bus.rejectedCount(.badSignature) == 2)
            #expect(a.bus.rejectedCount(.stale) == 1)
            #expect(a.bus.rejectedCount(.replayed) == 1)
            #expect(a.bus.rejectedCount(.malformed) == 0)
            #expect(a.bus.previousSecretCount == 0)
            let reports = a.events.compactMap { event -> ClusterBusRejection? in
                if case .rejected(let reason, _, _) = event { reason } else { nil }
            }
            #expect(reports.first == .unsigned && reports.count < unsigned.count + 5, "at most one report a second")
            #expect(a.bus.isConnected)
        }
    }

    @Test func aNodeSigningWithThePreviousSecretIsHeardAndCounted() throws {
        try TestPostgres.withDatabase { url in
            let next = "the-next-cluster-secret-0123456789abcdefgh"
            let rotated = try Node("a", url, secrets: try ClusterSecrets(current: next, previous: Node.secret))
            let notYet = try Node("b", url, secrets: try ClusterSecrets(current: Node.secret, previous: next))
            let dropped = try Node("c", url, secrets: try ClusterSecrets(current: next))
            defer { rotated.bus.stop(); notYet.bus.stop(); dropped.bus.stop() }
            notYet.bus.publish(.deviceRevoked(playerID: 1, deviceID: 1))
            rotated.bus.publish(.deviceRevoked(playerID: 1, deviceID: 2))
            try rotated.waitFor(count: 1)
            try notYet.waitFor(count: 1)
            try dropped.waitFor(count: 1)
            #expect(rotated.received.map(\.message) == [.deviceRevoked(playerID: 1, deviceID: 1)])
            #expect(notYet.received.map(\.message) == [.deviceRevoked(playerID: 1, deviceID: 2)])
            #expect(rotated.bus.previousSecretCount == 1 && notYet.bus.previousSecretCount == 1)
            // A node that no longer accepts the old secret hears only the rotated node.
            try waitUntil("c rejects b's message") { dropped.bus.rejectedCount(.badSignature) == 1 }
            #expect(dropped.received.map(\.sender) == ["a"])
        }
    }

    /// The bus only listens: TCP keepalives are what notice a database gone from the network.
    /// The other tests connect with them in a URL; libpq takes them as `key=value` pairs too.
    @Test func theBusAsksForKeepalivesUnlessTheURLSetsItsOwn() throws {
        let admin = try #require(TestPostgres.adminURL)
        let url = try #require(URLComponents(string: admin))
        let pairs = "host=\(url.host ?? "127.0.0.1") port=\(url.port ?? 5432) user=\(url.user ?? "postgres") dbname=postgres"
        #expect(try PostgresConnection(conninfo: PostgresClusterBus.withKeepalives(pairs)).execute("SELECT 1").first?.int64(at: 0) == 1)

        #expect(PostgresClusterBus.withKeepalives("postgres://u@h/db")
                    == "postgres://u@h/db?keepalives=1&keepalives_idle=30&keepalives_interval=10&keepalives_count=3")
        #expect(PostgresClusterBus.withKeepalives("postgresql://u@h/db?sslmode=require&keepalives_idle=5")
                    == "postgresql://u@h/db?sslmode=require&keepalives_idle=5&keepalives=1&keepalives_interval=10&keepalives_count=3")
        #expect(PostgresClusterBus.withKeepalives("host=h dbname=db")
                    == "host=h dbname=db keepalives=1 keepalives_idle=30 keepalives_interval=10 keepalives_count=3")
        let own = "postgres://h/db?keepalives=0&keepalives_idle=1&keepalives_interval=1&keepalives_count=1"
        #expect(PostgresClusterBus.withKeepalives(own) == own)
    }

    @Test func aBadNodeIDChannelOrServerIsRefused() throws {
        for node in ["", "a|b", "a b", String(repeating: "n", count: 65), "é"] {
            #expect(throws: PostgresError.self, "\(node)") { _ = try PostgresClusterBus(conninfo: "postgres://127.0.0.1/x", nodeID: node, secrets: Node.secrets) }
        }
        for channel in ["", "Upper", "1st", "a-b", "a;b"] {
            #expect(throws: PostgresError.self, "\(channel)") {
                _ = try PostgresClusterBus(conninfo: "postgres://127.0.0.1/x", nodeID: "a", secrets: Node.secrets, channel: channel)
            }
        }
        // Nothing listens on port 1: start says so and leaves nothing running.
        let bus = try PostgresClusterBus(conninfo: "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2", nodeID: "a",
                                         secrets: Node.secrets)
        #expect(throws: PostgresError.self) { try bus.start { _ in } }
        #expect(!bus.isConnected)
        bus.stop()
    }
}

/// One node's bus and what reached it.
private final class Node: Sendable {
    let bus: PostgresClusterBus
    private let log = Log()

    private final class Log: Sendable {
        let entries = Mutex<(received: [ClusterEnvelope], events: [PostgresClusterBus.Event])>(([], []))
    }

    static let secret = "postgres-bus-test-secret-0123456789abcdefgh"
    static let secrets = try! ClusterSecrets(current: secret)

    init(_ name: String, _ url: String, secrets: ClusterSecrets = Node.secrets,
         backoff: PostgresClusterBus.Backoff = .init(initial: 0.05, maximum: 0.5)) throws {
        let log = self.log
        bus = try PostgresClusterBus(conninfo: url, nodeID: name, secrets: secrets, backoff: backoff, onEvent: { event in
            log.entries.withLock { $0.events.append(event) }
        })
        try bus.start { envelope in log.entries.withLock { $0.received.append(envelope) } }
    }

    var received: [ClusterEnvelope] { log.entries.withLock { $0.received } }
    var events: [PostgresClusterBus.Event] { log.entries.withLock { $0.events } }

    func waitFor(count: Int) throws {
        try waitUntil("\(bus.nodeID) receives \(count) messages (has \(received.count))") { received.count >= count }
    }
}

/// Waits (up to 20 s, a bound on liveness) until `condition` holds.
private func waitUntil(_ what: @autoclosure () -> String, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what())")
            throw CancellationError()
        }
        usleep(10_000)
    }
}
