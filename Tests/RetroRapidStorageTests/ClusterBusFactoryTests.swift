import Foundation
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidStorageFixtures
import Synchronization
import Testing

/// The factory refuses what cannot be a bus before anything connects, and opens a working one
/// on a PostgreSQL database.
@Suite("Cluster bus factory")
struct ClusterBusFactoryTests {
    static let secrets = try! ClusterSecrets(current: "factory-test-secret-0123456789abcdefghij")

    @Test func aBadNodeIDOrANonPostgresLocationIsRefused() {
        for node in ["", "a|b", "a b", "ü", String(repeating: "n", count: 65)] {
            #expect(throws: ClusterBusFactoryError.invalidNodeID(node)) {
                _ = try ClusterBusFactory.open(postgresURL: "postgres://127.0.0.1/x", nodeID: node, secrets: Self.secrets)
            }
        }
        for location in ["data/retrorapid.sqlite", "mysql://127.0.0.1/x", "host=127.0.0.1"] {
            #expect(throws: ClusterBusFactoryError.notPostgres) { _ = try ClusterBusFactory.open(postgresURL: location, nodeID: "a", secrets: Self.secrets) }
        }
    }

    @Test(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL"))
    func twoBusesItOpensOnOneDatabaseTalk() throws {
        try TestPostgres.withDatabase { url in
            let a = try ClusterBusFactory.open(postgresURL: url, nodeID: "node-a", secrets: Self.secrets)
            let b = try ClusterBusFactory.open(postgresURL: url, nodeID: "node-b", secrets: Self.secrets)
            let heard = Mutex<[ClusterEnvelope]>([])
            try a.start { _ in }
            try b.start { envelope in heard.withLock { $0.append(envelope) } }
            defer { a.stop(); b.stop() }
            a.publish(.deviceRevoked(playerID: 1, deviceID: 2))
            let deadline = ContinuousClock.now + .seconds(20)
            while heard.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { usleep(10_000) }
            #expect(heard.withLock { $0 } == [ClusterEnvelope(sender: "node-a", message: .deviceRevoked(playerID: 1, deviceID: 2))])
        }
    }
}
