import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidStorageFixtures
import Testing

/// Link codes against a real server, from connections of their own: a code gives one token,
/// and the per-player creation limit holds when codes are asked for at once.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresLinkCodeRaceTests {
    let t0 = utc("2026-01-15T10:00:00Z")

    @Test func aCodeClaimedByManyDevicesAtOnceGivesOneToken() throws {
        try withRaceDatabase { url, connection in
            let players = SQLPlayerRepository(executor: connection)
            let (player, token) = try players.createPlayer(displayName: "Ada", deviceLabel: "Laptop", now: t0)
            let laptop = try players.authenticate(token: token, now: t0)
            let code = try SQLLinkCodeRepository(executor: connection).createCode(for: laptop, now: t0).code

            let now = t0.addingTimeInterval(30)
            let results = raceOnConnections(30, url: url) { index, racer in
                try SQLLinkCodeRepository(executor: racer).claim(code: code, deviceLabel: "Phone \(index)", now: now).token
            }
            #expect(results.compactMap(\.value).count == 1)
            let refusals = results.compactMap(\.refusal)
            #expect(refusals.count == 29)
            #expect(refusals.allSatisfy { $0.code == .expired && $0.message.contains("already used") })
            #expect(try players.devices(playerID: player.id).count == 2)
        }
    }

    @Test func codesAskedForAtOnceStopAtTheLimit() throws {
        try withRaceDatabase { url, connection in
            let players = SQLPlayerRepository(executor: connection)
            let (player, token) = try players.createPlayer(displayName: "Ada", deviceLabel: "Laptop", now: t0)
            let laptop = try players.authenticate(token: token, now: t0)

            let results = raceOnConnections(30, url: url) { _, racer in
                try SQLLinkCodeRepository(executor: racer).createCode(for: laptop, now: t0)
            }
            let policy = LinkCodePolicy()
            #expect(results.compactMap(\.value).count == policy.maximumPerWindow)
            let refusals = results.compactMap(\.refusal)
            #expect(refusals.count == 30 - policy.maximumPerWindow)
            #expect(refusals.allSatisfy { $0.code == .rateLimited })
            #expect(try connection.execute("SELECT count(*) FROM link_codes WHERE player_id = $1", [player.id]).first?.int(at: 0)
                    == policy.maximumPerWindow)
        }
    }
}
