import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

/// Recording games under real concurrency (SQLGameRepository on PostgreSQL): one player's games and
/// other players' games on the same boards, recorded at once over many connections. The rules
/// are in Tests/RetroRapidStorageTests/GameRepositoryContractTests.swift.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresGameRaceTests {
    let noon = utc("2026-01-15T12:00:00Z")

    @Test func concurrentRecordsKeepEachBestAndTheScoreCountsExact() throws {
        try withRaceDatabase { url, connection in
            let racer = try addRacePlayer(connection, "racer")
            let others = try (0..<20).map { try addRacePlayer(connection, "other-\($0)") }
            let noon = self.noon
            // Each connection records one of the racer's games (scores 1…100 in a shuffled order)
            // and one of another player's, whose scores repeat so that many share a count row.
            let scores = Array(1...100).shuffled()
            let outcomes = raceOnConnections(100, url: url) { index, db in
                let games = SQLGameRepository(executor: db)
                let mine = try games.record(scoredGame(player: racer, score: scores[index], endedAt: noon.addingTimeInterval(Double(index))))
                try games.record(scoredGame(player: others[index % 20], score: (index * 7) % 30, endedAt: noon.addingTimeInterval(Double(index))))
                return mine.standings.map(\.isNewBest)
            }
            let failures = outcomes.compactMap { outcome -> String? in
                if case .failure(let error) = outcome { return "\(error)" }
                return nil
            }
            #expect(failures.isEmpty, "\(failures)")
            #expect(try connection.execute("SELECT count(*) FROM games").first?.int(at: 0) == 200)

            // The racer's best on each board is the 100, from its own game, achieved when it ended.
            let top = try connection.execute("SELECT id, ended_at FROM games WHERE player_id = $1 AND score = 100", [racer])
            let best = try connection.execute("""
                SELECT period, score, game_id, achieved_at FROM best_scores WHERE player_id = $1 ORDER BY period
                """, [racer]).map { [$0.string(at: 0), $0.string(at: 1), $0.string(at: 2), $0.string(at: 3)] }
            let game = try #require(top.first)
            #expect(best == ["all", "day", "week"].map { [$0, "100", game.string(at: 0), game.string(at: 1)] })
            // The game that scored 100 was a new best on every board, whenever it committed.
            #expect(try outcomes[scores.firstIndex(of: 100)!].get() == [true, true, true])

            // Each other player's best is the highest of their five games.
            for (slot, player) in others.enumerated() {
                let expected = stride(from: slot, to: 100, by: 20).map { ($0 * 7) % 30 }.max()!
                let stored = try connection.execute("SELECT DISTINCT score FROM best_scores WHERE player_id = $1", [player]).map { $0.int(at: 0) }
                #expect(stored == [expected], "player \(slot)")
            }

            // score_counts is exactly best_scores counted: every board, every score, no empty rows.
            let mismatches = try connection.execute("""
                SELECT coalesce(c.level, b.level), coalesce(c.period, b.period), coalesce(c.score, b.score), c.players, b.players
                FROM score_counts c
                FULL JOIN (SELECT level, period, period_key, score, count(*) AS players FROM best_scores
                           GROUP BY level, period, period_key, score) b
                  USING (level, period, period_key, score)
                WHERE c.players IS DISTINCT FROM b.players
                """).rows
            #expect(mismatches.isEmpty, "\(mismatches)")
            let totals = try connection.execute("""
                SELECT period, (SELECT sum(players) FROM score_counts c WHERE c.period = b.period), count(*)
                FROM best_scores b GROUP BY period ORDER BY period
                """).map { [$0.string(at: 0), $0.string(at: 1), $0.string(at: 2)] }
            #expect(totals == ["all", "day", "week"].map { [$0, "21", "21"] })
            // And the leaderboard reads it: the racer first, 21 players on the board.
            let page = try SQLLeaderboardRepository(executor: connection).top(level: .fast, period: .today, limit: 5, now: noon)
            #expect(page.total == 21 && page.entries.first?.playerPublicID == "racer" && page.entries.first?.score == 100)
        }
    }
}
