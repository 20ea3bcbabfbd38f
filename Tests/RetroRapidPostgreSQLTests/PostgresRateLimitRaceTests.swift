import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// The stored rate limits against a real server, from connections of their own (as nodes on
/// one database have): takes at once never count more than the limit, and a take whose group
/// transaction could not see another node's count gives up rather than count past it.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresRateLimitRaceTests {
    let t0 = utc("2026-01-15T10:00:00Z")

    func key(_ key: String, scope: String = "player", count: Int) -> RateLimitKey {
        RateLimitKey(action: "code_redeem", scope: scope, key: key, count: count, window: .seconds(600))
    }

    @Test func twoConnectionsRacingForTheLastPlaceGetOneBetweenThem() throws {
        try withRaceDatabase { url, connection in
            let limits = SQLRateLimitRepository(executor: connection)
            let now = t0
            for round in 0..<20 {
                let player = key("\(round)", count: 3)
                try limits.take([player], now: now)
                try limits.take([player], now: now)
                let results = raceOnConnections(2, url: url) { _, racer in
                    try SQLRateLimitRepository(executor: racer).take([player], now: now)
                }
                #expect(results.compactMap(\.value).count == 1, "round \(round)")
                #expect(results.filter { if case .failure(let error) = $0 { error is RateLimitReached } else { false } }.count == 1)
                #expect(try connection.execute("SELECT count(*) FROM rate_limit_events WHERE key = $1", [player.key]).first?.int(at: 0) == 3)
            }
        }
    }

    @Test func fortyGuessesAtOnceFromOnePlayerAndAddressCountFive() throws {
        try withRaceDatabase { url, connection in
            let player = key("7", count: 5), address = key("192.0.2.1", scope: "address", count: 30)
            let now = t0
            let results = raceOnConnections(40, url: url) { _, racer in
                try SQLRateLimitRepository(executor: racer).take([player, address], now: now)
            }
            #expect(results.compactMap(\.value).count == 5)
            let refused = results.compactMap { result -> RateLimitReached? in
                if case .failure(let error) = result { error as? RateLimitReached } else { nil }
            }
            #expect(refused.count == 35 && refused.allSatisfy { $0.key == player && $0.retryAfter == 600 })
            let counted = try connection.execute("SELECT count(*) FROM rate_limit_events").first?.int(at: 0)
            #expect(counted == 10)
        }
    }

    @Test func aTakeInAGroupThatMissedAnotherNodesCountGivesUpTheGroup() throws {
        try withRaceDatabase { url, connection in
            let other = try PostgresConnection(conninfo: url)
            let mine = SQLRateLimitRepository(executor: connection)
            let theirs = SQLRateLimitRepository(executor: other)
            let player = key("7", count: 1)
            #expect(throws: (any Error).self) {
                _ = try connection.group(2) { unit in
                    if unit == 0 {
                        // The group's snapshot is taken here; then another node counts the one place.
                        #expect(try mine.refusal([player], now: t0) == nil)
                        try theirs.take([player], now: t0)
                    } else {
                        try mine.take([player], now: t0)
                    }
                }
            }
            // Nothing of the group was committed; alone, the take sees the other node's count.
            #expect(throws: RateLimitReached(key: player, retryAfter: 600)) { try mine.take([player], now: t0) }
            let counted = try connection.execute("SELECT count(*) FROM rate_limit_events").first?.int(at: 0)
            #expect(counted == 1)
        }
    }
}
