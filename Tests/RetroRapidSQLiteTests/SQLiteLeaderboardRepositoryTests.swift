import Foundation
import RetroRapidRules
@testable import RetroRapidDomain
@testable import RetroRapidSQLite
import RetroRapidStorageFixtures
@testable import RetroRapidSQL
import Testing

/// Leaderboards where only SQL can check (query plans, the score counts, a deleted player); the
/// rules are in Tests/RetroRapidStorageTests/LeaderboardRepositoryContractTests.swift.
@Suite struct SQLiteLeaderboardRepositoryTests {
    // Stays here: SQLite's query plans for the repository's own SQL.
    /// Ranks and pages must come from the indexes built for them (a seek and a short walk, a
    /// sum over one board's score counts, a count over one score's entries), never a scan and
    /// sort. Asks SQLite for the plans of the repository's own queries.
    @Test(arguments: [
        SQLLeaderboardRepository.rankSQL, SQLLeaderboardRepository.totalSQL, SQLLeaderboardRepository.firstPageSQL(.sqlite),
        SQLLeaderboardRepository.pageAfterSQL(.sqlite), SQLLeaderboardRepository.pageBeforeSQL(.sqlite),
    ])
    func rankingQueriesUseTheirIndexes(sql: String) throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let details = try db.prepare("EXPLAIN QUERY PLAN " + sql).query { $0.string(at: 3) }
            let tables = details.filter { $0.contains("best_scores") || $0.contains("score_counts") || $0.hasPrefix("SEARCH b ") }
            #expect(!tables.isEmpty)
            for detail in tables {
                let board = "(level=? AND period=? AND period_key=?"
                let ok = detail.hasPrefix("SEARCH") && detail.contains(board)
                    && (detail.contains("COVERING INDEX best_scores_ranking") || detail.contains("COVERING INDEX score_counts_covering"))
                #expect(ok, "\(details)")
            }
            #expect(!details.contains { $0.contains("TEMP B-TREE") }, "sorts instead of walking an index: \(details)")
        }
    }

    // Stays here: a player deleted with SQL, and score_counts checked against best_scores.
    /// Ranks from the score counts agree with ranks from sorting every entry, through new
    /// bests, scores that replace others, and a player deleted with all their scores.
    @Test func ranksMatchASortOfTheBoardThroughReplacementsAndDeletions() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLGameRepository(executor: SQLiteExecutor(database: db))
            let boards = SQLLeaderboardRepository(executor: SQLiteExecutor(database: db))
            var random = SystemRandomNumberGenerator()
            let start = utc("2026-01-17T20:00:00Z")  // a Saturday evening
            var ids: [Int64] = []
            for index in 0..<40 { ids.append(try LeaderboardFixture.addPlayer(db, "p\(index)")) }
            for index in 0..<400 {
                // Across midnight and into the next week, with many equal scores and seconds.
                let ended = start.addingTimeInterval(Double(index * 700 + Int.random(in: 0..<3, using: &random)))
                try games.record(scoredGame(
                    player: ids.randomElement(using: &random)!, level: [.cruise, .fast].randomElement(using: &random)!,
                    score: Int.random(in: 0...25, using: &random), endedAt: ended))
            }
            try db.prepare("DELETE FROM players WHERE id = ?").execute([ids.removeLast()])

            let stale = try db.column("""
                SELECT count(*) FROM (
                    SELECT level, period, period_key, score, count(*) AS players FROM best_scores
                    GROUP BY level, period, period_key, score
                    EXCEPT SELECT level, period, period_key, score, players FROM score_counts
                    UNION ALL
                    SELECT level, period, period_key, score, players FROM score_counts
                    EXCEPT SELECT level, period, period_key, score, count(*) FROM best_scores
                    GROUP BY level, period, period_key, score)
                """)
            #expect(stale == [.integer(0)])

            let boardsInUse = try db.prepare("SELECT DISTINCT level, period, period_key FROM best_scores")
                .query { ($0.string(at: 0), $0.string(at: 1), $0.string(at: 2)) }
            #expect(boardsInUse.count > 6)
            for (level, period, key) in boardsInUse {
                let sorted = try db.prepare("""
                    SELECT player_id FROM best_scores WHERE level = ? AND period = ? AND period_key = ?
                    ORDER BY score DESC, achieved_at, player_id
                    """).query([level, period, key]) { $0.int64(at: 0) }
                let now = try #require(try db.prepare("SELECT max(achieved_at) FROM best_scores WHERE level = ? AND period = ? AND period_key = ?")
                    .query([level, period, key]) { utc($0.string(at: 0)) }.first)
                let periodName = try #require(LeaderboardPeriod.allCases.first { $0.storageName == period })
                for (position, player) in sorted.enumerated() {
                    let mine = try boards.aroundMe(playerID: player, level: SpeedLevel(rawValue: level)!, period: periodName, neighbours: 1, now: now)
                    #expect(mine?.me.rank == position + 1)
                    #expect(mine?.total == sorted.count)
                }
            }
        }
    }

    // Stays here: a count only SQL can damage.
    /// A count of players read back from `score_counts` meets arithmetic (a rank is it + 1, a
    /// neighbour's rank + 1 more): one out of range is `unreadable`, never an overflow trap.
    @Test func aDamagedScoreCountIsUnreadableNotATrap() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLGameRepository(executor: SQLiteExecutor(database: db))
            let boards = SQLLeaderboardRepository(executor: SQLiteExecutor(database: db))
            let high = try LeaderboardFixture.addPlayer(db, "high")
            let low = try LeaderboardFixture.addPlayer(db, "low")
            let ended = utc("2026-01-17T20:00:00Z")
            try games.record(scoredGame(player: high, level: .fast, score: 20, endedAt: ended))
            try games.record(scoredGame(player: low, level: .fast, score: 10, endedAt: ended))
            // The rank of the player below: Int64.max ahead, so + 1 would trap.
            try db.prepare("UPDATE score_counts SET players = ? WHERE score = 20").execute([Int64.max])
            let around = #expect(throws: StoreError.self) {
                try boards.aroundMe(playerID: low, level: .fast, period: .allTime, neighbours: 5, now: ended)
            }
            #expect(around?.code == .unreadable)
            // The board's total: beyond any real board.
            try db.prepare("UPDATE score_counts SET players = ? WHERE score = 20").execute([2_000_000_000_000])
            let page = #expect(throws: StoreError.self) { try boards.top(level: .fast, period: .allTime, limit: 20, now: ended) }
            #expect(page?.code == .unreadable)
        }
    }
}

/// Helpers for this file.
fileprivate enum LeaderboardFixture {
    /// A bare player named "Racer <publicID>", so a board shows whose row is whose.
    static func addPlayer(_ db: Database, _ publicID: String) throws -> Int64 {
        try insertPlayer(db, publicID, name: "Racer \(publicID)")
    }
}
