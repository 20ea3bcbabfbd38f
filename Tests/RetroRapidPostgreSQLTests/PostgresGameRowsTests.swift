import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

/// Finished games where only SQL can check (which game a best points at, a write that fails
/// half-way), as Tests/RetroRapidSQLiteTests/SQLiteGameRepositoryTests.swift does for SQLite;
/// the rules are in Tests/RetroRapidStorageTests/GameRepositoryContractTests.swift.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresGameRowsTests {
    let start = utc("2026-01-15T10:00:00Z")

    @Test func aBestPointsAtTheGameThatSetIt() throws {
        try withRaceDatabase { _, connection in
            let ann = try addRacePlayer(connection, "ann")
            let repository = SQLGameRepository(executor: connection)
            let best = try repository.record(scoredGame(player: ann, score: 50, endedAt: start))
            try repository.record(scoredGame(player: ann, score: 30, endedAt: start.addingTimeInterval(60)))
            try repository.record(scoredGame(player: ann, score: 50, endedAt: start.addingTimeInterval(120)))
            let rows = try connection.execute("SELECT score, achieved_at, game_id FROM best_scores ORDER BY period")
                .map { $0.cells.map { $0 ?? "NULL" } }
            #expect(rows == Array(repeating: ["50", "2026-01-15T10:00:00Z", String(best.game.id)], count: 3))
        }
    }

    /// The game, its running row and its scores are one transaction: when the last board's
    /// write fails, the game is not stored, its running game still runs, and no board moved.
    @Test func aGameIsNeverHalfWritten() throws {
        try withRaceDatabase { _, connection in
            let ann = try addRacePlayer(connection, "ann")
            try beginRunningGame(SQLRunningGameRepository(postgres: connection), "00000000000000aa", player: ann, at: start)
            // Fails the all-time board's write, after the game and two boards are written.
            try connection.executeScript("""
                CREATE FUNCTION refuse_all_time() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.period = 'all' THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN NEW; END; $$;
                CREATE TRIGGER refuse_all_time BEFORE INSERT ON best_scores FOR EACH ROW EXECUTE FUNCTION refuse_all_time();
                """)
            let before = try dump(connection)
            var game = scoredGame(player: ann, score: 10, endedAt: start.addingTimeInterval(30))
            game.publicID = "00000000000000aa"
            let error = #expect(throws: PostgresError.self) { try SQLGameRepository(executor: connection).record(game) }
            #expect(error?.message.contains("disk on fire") == true)
            #expect(!connection.isInTransaction)
            #expect(try dump(connection) == before)
            #expect(try connection.execute("SELECT count(*) FROM games").first?.int(at: 0) == 0)
            #expect(try connection.execute("SELECT public_id FROM running_games").map { $0.string(at: 0) } == ["00000000000000aa"])
        }
    }

    /// The rows of the tables a record writes, as text.
    private func dump(_ connection: PostgresConnection) throws -> [String] {
        try ["games", "running_games", "best_scores", "score_counts", "plays"].flatMap { table in
            try ["-- \(table)"] + connection.execute("SELECT t::text FROM \(table) t ORDER BY 1").map { $0.string(at: 0) }
        }
    }
}
