import Foundation
@testable import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
@testable import RetroRapidSQL
import Testing

/// PostgreSQL's plans for the leaderboard's own SQL (SQLLeaderboardRepository in the PostgreSQL dialect): ranks and
/// pages come from `best_scores_ranking` and `score_counts`, a seek and a short walk, never a
/// scan of a table or a sort. The rules are in
/// Tests/RetroRapidStorageTests/LeaderboardRepositoryContractTests.swift.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresLeaderboardPlanTests {
    /// Each query with the parameters it gets: a board, a position in its middle, a limit.
    static let queries: [(name: String, sql: String, parameters: String)] = [
        ("rank", SQLLeaderboardRepository.rankSQL, "'fast', 'all', 'all', 500, '2026-01-15T12:00:00Z', 2500"),
        ("total", SQLLeaderboardRepository.totalSQL, "'fast', 'all', 'all'"),
        ("first page", SQLLeaderboardRepository.firstPageSQL(.postgresql), "'fast', 'all', 'all', 21"),
        ("page after", SQLLeaderboardRepository.pageAfterSQL(.postgresql), "'fast', 'all', 'all', 500, '2026-01-15T12:00:00Z', 2500, 21"),
        ("page before", SQLLeaderboardRepository.pageBeforeSQL(.postgresql), "'fast', 'all', 'all', 500, '2026-01-15T12:00:00Z', 2500, 5"),
    ]

    @Test func rankingQueriesUseTheirIndexesInCustomAndGenericPlans() throws {
        try withRaceDatabase { _, connection in
            // 5,000 players with a best on each of nine boards (three levels × day, week, all),
            // scores 0…999 so that many share one: enough rows that a scan would cost more.
            try connection.executeScript("""
                INSERT INTO players (public_id, display_name, created_at)
                    SELECT 'p' || n, 'Racer ' || n, '2026-01-01T00:00:00Z' FROM generate_series(1, 5000) AS n;
                INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
                                   started_at, ended_at, duration_ms)
                    SELECT id, 'fast', 1, 1, '0:', 0, 0, 'crash', false, '2026-01-15T12:00:00Z', '2026-01-15T12:00:00Z', 0 FROM players;
                INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
                    SELECT l, p, CASE p WHEN 'day' THEN '2026-01-15' WHEN 'week' THEN '2026-W03' ELSE 'all' END,
                           g.player_id, (g.player_id * 7919) % 1000, '2026-01-15T12:' || lpad(((g.player_id % 60))::text, 2, '0') || ':00Z', g.id
                    FROM games g, unnest(ARRAY['cruise', 'fast', 'rapid']) AS l, unnest(ARRAY['day', 'week', 'all']) AS p;
                """)
            // As autovacuum leaves a table: statistics, and the visibility map index-only scans need.
            try connection.executeScript("VACUUM ANALYZE")
            #expect(try connection.execute("SELECT count(*) FROM score_counts WHERE level = 'fast' AND period = 'all'").first?.int(at: 0) == 1000)
            for mode in ["force_custom_plan", "force_generic_plan"] {
                try connection.executeScript("SET plan_cache_mode = \(mode)")
                for (index, query) in Self.queries.enumerated() {
                    let name = "plan_\(mode)_\(index)"
                    try connection.executeScript("PREPARE \(name) AS \(query.sql)")
                    let plan = try connection.execute("EXPLAIN EXECUTE \(name)(\(query.parameters))").map { $0.string(at: 0) }
                    let text = plan.joined(separator: "\n")
                    if query.name != "total" { #expect(text.contains("Index Only Scan") && text.contains("using best_scores_ranking"), "\(query.name), \(mode):\n\(text)") }
                    if query.name == "rank" || query.name == "total" {
                        #expect(text.contains("Index Only Scan using score_counts_covering"), "\(query.name), \(mode):\n\(text)")
                    }
                    #expect(!text.contains("Seq Scan"), "\(query.name), \(mode) scans a table:\n\(text)")
                    #expect(!text.contains("Sort"), "\(query.name), \(mode) sorts instead of walking an index:\n\(text)")
                    // Every scan of a board's index is a seek into the board, not a walk of the index.
                    var boardScan = false
                    for line in plan {
                        if line.contains("best_scores_ranking") || line.contains("score_counts") {
                            boardScan = line.contains("Scan")
                        } else if boardScan, line.contains("Index Cond") {
                            // `$1` in a generic plan, the value in a custom one.
                            let board = line.contains("Index Cond: ((level = ") && line.contains(") AND (period = ") && line.contains(") AND (period_key = ")
                            #expect(board, "\(query.name), \(mode): \(line)")
                            boardScan = false
                        }
                    }
                }
            }
        }
    }
}
