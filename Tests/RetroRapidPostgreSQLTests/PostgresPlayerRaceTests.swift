import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidStorageFixtures
import Testing

/// A player's devices against a real server, revoked from connections of their own: the last
/// active device is never revoked, however the revokes overlap.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresPlayerRaceTests {
    let t0 = utc("2026-01-15T10:00:00Z")

    @Test func devicesRevokingEachOtherAtOnceLeaveOneSignedIn() throws {
        try withRaceDatabase { url, connection in
            let players = SQLPlayerRepository(executor: connection)
            let links = SQLLinkCodeRepository(executor: connection, policy: LinkCodePolicy(maximumPerWindow: 1000))
            let (player, token) = try players.createPlayer(displayName: "Ada", deviceLabel: "Device 0", now: t0)
            let first = try players.authenticate(token: token, now: t0)
            for index in 1..<8 {
                _ = try links.claim(code: try links.createCode(for: first, now: t0).code, deviceLabel: "Device \(index)", now: t0)
            }
            let devices = try players.devices(playerID: player.id).map(\.id)
            #expect(devices.count == 8)

            // All eight are revoked at once, each on a connection of its own: seven go, one stays.
            let now = t0.addingTimeInterval(60)
            let results = raceOnConnections(devices.count, url: url) { index, racer in
                try SQLPlayerRepository(executor: racer).revokeDevice(playerID: player.id, deviceID: devices[index], now: now)
            }
            #expect(results.filter { (try? $0.get()) != nil }.count == 7)
            let refusals = results.compactMap(\.refusal)
            #expect(refusals.count == 1)
            #expect(refusals.allSatisfy { $0.code == .conflict && $0.message.contains("link another device first") })
            #expect(try players.devices(playerID: player.id).filter { !$0.isRevoked }.count == 1)
        }
    }
}
