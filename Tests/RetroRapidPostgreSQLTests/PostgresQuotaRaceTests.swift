import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// The free plays under real concurrency: many connections to one server racing for one
/// player's plays (the player's row lock, SQLQuotaRepository). The rules themselves are in
/// Tests/RetroRapidStorageTests/QuotaRepositoryContractTests.swift.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresQuotaRaceTests {
    let now = utc("2026-01-15T12:00:00Z")

    @Test func theLastFreePlayGoesToExactlyOneOfAHundredConsumes() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacePlayer(connection, "p-1")
            let quota = SQLQuotaRepository(executor: connection, dailyFreePlays: 5)
            for _ in 1...4 { try quota.consumePlay(playerID: player, now: now) }
            let now = self.now
            let outcomes = raceOnConnections(100, url: url) { index, db in
                try SQLQuotaRepository(executor: db, dailyFreePlays: 5).consumePlay(playerID: player, gameID: "g\(index)", now: now)
            }
            let (won, refused, other) = tally(outcomes, refusedWith: QuotaExhaustedError.self)
            #expect(other.isEmpty, "\(other)")
            #expect(won == 1 && refused == 99)
            #expect(try outcomes.compactMap { try? $0.get() }.map(\.playsUsed) == [5])
            #expect(try connection.execute("SELECT count(*) FROM plays WHERE player_id = $1", [player]).first?.int(at: 0) == 5)
            #expect(try quota.status(playerID: player, now: now).playsLeft == 0)
        }
    }

    @Test func aHundredConsumesForOneGameCountItOnce() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacePlayer(connection, "p-1")
            let now = self.now
            let outcomes = raceOnConnections(100, url: url) { _, db in
                try SQLQuotaRepository(executor: db, dailyFreePlays: 5).consumePlay(playerID: player, gameID: "g1", now: now)
            }
            let (won, _, other) = tally(outcomes, refusedWith: QuotaExhaustedError.self)
            #expect(other.isEmpty, "\(other)")
            #expect(won == 100)
            // Every one saw the game's single play.
            #expect(Set(outcomes.compactMap { try? $0.get().playsUsed }) == [1])
            #expect(try connection.execute("SELECT count(*) FROM plays WHERE player_id = $1", [player]).first?.int(at: 0) == 1)
        }
    }

    @Test func playersRacingForTheirOwnLastPlaysEachGetExactlyTheirs() throws {
        try withRaceDatabase { url, connection in
            // Ten players with two plays left each, ten connections racing for each player.
            let players = try (0..<10).map { try addRacePlayer(connection, "p-\($0)") }
            let quota = SQLQuotaRepository(executor: connection, dailyFreePlays: 3)
            for player in players { try quota.consumePlay(playerID: player, now: now) }
            let now = self.now
            let outcomes = raceOnConnections(100, url: url) { index, db in
                try SQLQuotaRepository(executor: db, dailyFreePlays: 3).consumePlay(playerID: players[index % 10], now: now)
            }
            let (won, refused, other) = tally(outcomes, refusedWith: QuotaExhaustedError.self)
            #expect(other.isEmpty, "\(other)")
            #expect(won == 20 && refused == 80)
            let counts = try connection.execute("SELECT player_id, count(*) FROM plays GROUP BY player_id ORDER BY player_id")
                .map { [$0.int64(at: 0), $0.int64(at: 1)] }
            #expect(counts == players.sorted().map { [$0, 3] })
        }
    }
}
