import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidStorageFixtures
import Testing

/// A code's redemption cap against a real server, with redeemers on connections of their own
/// (many nodes): the conditional UPDATE in SQLCodeRepository keeps it exact.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresCodeRaceTests {
    let created = utc("2026-01-01T00:00:00Z")
    let now = utc("2026-01-10T12:00:00Z")

    @Test func aCapOfTenHoldsExactlyWhenAHundredPlayersRedeemAtOnce() throws {
        try withRaceDatabase { url, connection in
            try SQLCodeRepository(executor: connection).create(code: "PRESS-2026", kind: .unlock, maxRedemptions: 10, now: created)
            let players = SQLPlayerRepository(executor: connection)
            let ids = try (0..<100).map { try addRacer(players, "\($0)").id }

            let now = now
            let results = raceOnConnections(100, url: url) { index, racer in
                try SQLCodeRepository(executor: racer).redeem(code: "press2026", playerID: ids[index], now: now)
            }

            let redeemed = results.compactMap(\.value)
            #expect(redeemed.count == 10)
            #expect(Set(redeemed.map(\.playerID)).count == 10)
            let refusals = results.compactMap(\.refusal)
            #expect(refusals.count == 90)
            #expect(refusals.allSatisfy { $0.code == .expired && $0.message == "Code PRESS2026 has been fully redeemed." })
            #expect(try SQLCodeRepository(executor: connection).code("PRESS2026").redemptions == 10)
            #expect(try connection.execute("SELECT count(*) FROM code_redemptions").first?.int(at: 0) == 10)
            // Exactly the ten who redeemed it hold unlimited play.
            let unlimited = try connection.execute("SELECT player_id FROM unlimited_entitlements ORDER BY player_id").map { $0.int64(at: 0) }
            #expect(unlimited == redeemed.map(\.playerID).sorted())
        }
    }

    @Test func onePlayerRedeemingOneCodeOnManyConnectionsCountsOnce() throws {
        try withRaceDatabase { url, connection in
            try createArcticConf(SQLCodeRepository(executor: connection), maxRedemptions: 5)
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id

            let now = now
            let results = raceOnConnections(20, url: url) { _, racer in
                try SQLCodeRepository(executor: racer).redeem(code: "ARCTICCONF", playerID: player, now: now)
            }

            let redemptions = results.compactMap(\.value)
            #expect(redemptions.count == 20)  // a repeat is the first redemption again, not a refusal
            #expect(Set(redemptions.map(\.redeemedAt)).count == 1)
            #expect(try SQLCodeRepository(executor: connection).code("ARCTICCONF").redemptions == 1)
            #expect(try connection.execute("SELECT count(*) FROM code_redemptions").first?.int(at: 0) == 1)
        }
    }
}
