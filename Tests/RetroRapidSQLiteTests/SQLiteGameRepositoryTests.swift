import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

/// Finished games where only SQL can check (stored columns, a forced fault, tampered rows); the
/// rules are in Tests/RetroRapidStorageTests/GameRepositoryContractTests.swift.
@Suite struct SQLiteGameRepositoryTests {
    let start = utc("2026-01-15T10:00:00Z")

    // Stays here: the stored columns (the seed's bit pattern, the times as text) read on a
    // second SQLite connection; what the interface returns is in
    // Tests/RetroRapidStorageTests/GameRepositoryContractTests.swift.
    @Test func aRecordedGameIsStoredWithEveryField() throws {
        try withMigratedDatabase(named: "games.sqlite") { db in
            let player = try insertPlayer(db)
            let seed: UInt64 = 0xF00D_0000_0000_BEEF
            let (log, state) = GameFixture.play(seed: seed, level: .rapid, dodgeSteps: 60)
            #expect(state.isOver)
            let game = NewGame(
                playerID: player, level: .rapid, seed: seed, inputLog: log, score: state.score, steps: state.step,
                endReason: .crash, startedAt: start, endedAt: start.addingTimeInterval(42.9), durationMilliseconds: 41_250)
            let recorded = try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(game)

            let reopened = try Database(path: db.path)
            #expect(try SQLGameRepository(executor: SQLiteExecutor(database: reopened)).game(id: recorded.game.id) == recorded.game)
            let row = try reopened.prepare("""
                SELECT level, seed, rules_version, input_log, score, steps, end_reason, practice,
                       started_at, ended_at, duration_ms FROM games
                """).query { row in (0..<row.columnCount).map { row.value(at: $0) } }
            #expect(row == [[
                .text("rapid"), .integer(Int64(bitPattern: seed)), .integer(Int64(GameRules.version)), .text(log.encoded),
                .integer(Int64(state.score)), .integer(Int64(state.step)), .text("crash"), .integer(0),
                .text("2026-01-15T10:00:00Z"), .text("2026-01-15T10:00:42Z"), .integer(41_250),
            ]])
        }
    }

    // Stays here: which game a best score points at (best_scores.game_id), and the stored time.
    @Test func aBestPointsAtTheGameThatSetIt() throws {
        try withMigratedDatabase(named: "games.sqlite") { db in
            let ann = try insertPlayer(db)
            let repository = SQLGameRepository(executor: SQLiteExecutor(database: db))
            let best = try repository.record(scoredGame(player: ann, score: 50, endedAt: start))
            try repository.record(scoredGame(player: ann, score: 30, endedAt: start.addingTimeInterval(60)))
            try repository.record(scoredGame(player: ann, score: 50, endedAt: start.addingTimeInterval(120)))
            let rows = try db.prepare("SELECT score, achieved_at, game_id FROM best_scores ORDER BY period").query { row in
                [row.value(at: 0), row.value(at: 1), row.value(at: 2)]
            }
            #expect(rows == Array(repeating: [.integer(50), .text("2026-01-15T10:00:00Z"), .integer(best.game.id)], count: 3))
        }
    }

    // Stays here: a fault forced with a temporary SQLite trigger.
    /// The game and its scores are one transaction: when the leaderboard write fails, the game
    /// is not stored either.
    @Test func aGameIsNeverHalfWritten() throws {
        try withMigratedDatabase(named: "games.sqlite") { db in
            let ann = try insertPlayer(db)
            let before = try db.dump()
            // A temporary trigger on this connection makes the third statement of record fail.
            try db.execute(sql: """
                CREATE TEMP TRIGGER refuse_scores BEFORE INSERT ON main.best_scores
                BEGIN SELECT RAISE(ABORT, 'disk on fire'); END
                """)
            let error = #expect(throws: DatabaseError.self) {
                try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(scoredGame(player: ann, score: 10, endedAt: start))
            }
            #expect(error?.message.contains("disk on fire") == true)
            #expect(!db.isInTransaction)
            try db.execute(sql: "DROP TRIGGER temp.refuse_scores")
            #expect(try db.dump() == before)
            #expect(try db.scalar("SELECT count(*) FROM games") == .integer(0))
        }
    }

    // Stays here: games changed behind the repository's back with SQL.
    /// `retrorapid verify`'s check: real games replay to their stored score; a score, steps or
    /// end reason changed behind the repository's back is reported.
    @Test func verifyFindsTamperedGames() throws {
        try withMigratedDatabase(named: "games.sqlite") { db in
            let ann = try insertPlayer(db)
            let repository = SQLGameRepository(executor: SQLiteExecutor(database: db))
            var ids: [Int64] = []
            for (index, level) in SpeedLevel.allCases.enumerated() {
                let seed = UInt64(2026 + index)
                let (log, state) = GameFixture.play(seed: seed, level: level, dodgeSteps: 80 + 40 * index)
                let game = NewGame(playerID: ann, level: level, seed: seed, inputLog: log, score: state.score,
                                   steps: state.step, endReason: .crash, startedAt: start, endedAt: start.addingTimeInterval(90),
                                   durationMilliseconds: 90_000)
                ids.append(try repository.record(game).game.id)
            }
            // An abandoned game: still running when stored.
            let (log, state) = GameFixture.play(seed: 7, level: .fast, dodgeSteps: 50, crash: false)
            #expect(!state.isOver)
            ids.append(try repository.record(NewGame(
                playerID: ann, level: .fast, seed: 7, inputLog: log, score: state.score, steps: state.step,
                endReason: .abandoned, startedAt: start, endedAt: start.addingTimeInterval(40), durationMilliseconds: 30_000)).game.id)
            #expect(try db.scalar("SELECT min(score) FROM games") != .integer(0))

            var counted = 0
            #expect(try repository.verifyAll(progress: { counted = $0 }).isEmpty)
            #expect(counted == 4)

            let stored = try #require(try repository.game(id: ids[0]))
            try db.prepare("UPDATE games SET score = score + 100 WHERE id = ?").execute([ids[0]])
            try db.prepare("UPDATE games SET end_reason = 'abandoned' WHERE id = ?").execute([ids[2]])
            try db.prepare("UPDATE games SET input_log = 'garbage:' WHERE id = ?").execute([ids[3]])
            let mismatches = try repository.verifyAll()
            #expect(mismatches.map(\.gameID) == [ids[0], ids[2], ids[3]])
            #expect(mismatches.first == GameMismatch(
                gameID: ids[0], playerID: ann, storedScore: stored.score + 100, storedSteps: stored.steps,
                replayedScore: stored.score, replayedSteps: stored.steps,
                reason: "score \(stored.score + 100) stored, \(stored.score) replayed"))
            #expect(mismatches[1].reason.contains("replay crashed"))
            #expect(mismatches[2].replayedScore == nil)
            #expect(mismatches[2].reason.contains("cannot replay"))
        }
    }
}
