import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

/// Games while they run where only SQL can check (checkpoint rows, SQLite's constraint, a
/// migration of hand-written rows); the rules are in
/// Tests/RetroRapidStorageTests/RunningGameRepositoryContractTests.swift.
@Suite struct SQLiteRunningGameRepositoryTests {
    let start = utc("2026-01-15T10:00:00Z")

    @discardableResult
    func begin(_ repository: RunningGameRepository, _ id: String, player: Int64, seed: UInt64 = 7, level: SpeedLevel = .fast,
               practice: Bool = false, at: Date? = nil) throws -> QuotaStatus? {
        try beginRunningGame(repository, id, player: player, seed: seed, level: level, practice: practice, at: at ?? start)
    }

    // Stays here: the uniqueness is SQLite's own constraint error (the contract only sees a refusal).
    @Test func aSecondRecordOfOnePublicIDIsAUniqueViolation() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            try begin(SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db)), "00000000000000aa", player: player)
            var game = scoredGame(player: player, score: 12, endedAt: start.addingTimeInterval(40))
            game.publicID = "00000000000000aa"
            try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(game)
            let again = #expect(throws: DatabaseError.self) { try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(game) }
            #expect(again?.isUniqueViolation == true)
            #expect(try db.scalar("SELECT count(*) FROM games") == .integer(1))
        }
    }

    // Stays here: the game_checkpoints rows, appended and never rewritten.
    @Test func checkpointsAppendOnlyWhatChanged() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db))
            for id in ["00000000000000a1", "00000000000000a2"] { try begin(repository, id, player: player, practice: true) }
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 4, movesBefore: 0, moves: [.init(afterStep: 3, direction: .left)],
                               durationMilliseconds: 3600),
                GameCheckpoint(publicID: "00000000000000a2", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1700),
                // A game no longer running (stored meanwhile): its row is harmless and ignored.
                GameCheckpoint(publicID: "00000000000000a3", steps: 9, movesBefore: 0, moves: [], durationMilliseconds: 3800),
            ], now: start.addingTimeInterval(4))
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 9, movesBefore: 1,
                               moves: [.init(afterStep: 5, direction: .right), .init(afterStep: 9, direction: .right)],
                               durationMilliseconds: 8600),
            ], now: start.addingTimeInterval(9))
            #expect(try db.column("SELECT moves FROM game_checkpoints ORDER BY id") == [.text("3L"), .text(""), .text(""), .text("5R,9R")])
        }
    }

    // Stays here: a batch goes in INSERTs of several rows, texts bound in place; every row of
    // batches on both sides of a statement's size must land whole, in the batch's order, with
    // its own values (not a neighbour's, not a stale buffer's), an empty log as '' not NULL.
    @Test(arguments: [1, SQLiteCheckpointTable.rowsPerInsert - 1, SQLiteCheckpointTable.rowsPerInsert,
                      SQLiteCheckpointTable.rowsPerInsert + 1, 2 * SQLiteCheckpointTable.rowsPerInsert + 5])
    func aBatchOfAnySizeWritesEveryRowWithItsOwnValuesInOrder(_ count: Int) throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let repository = SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db))
            func batch(_ round: Int) -> [GameCheckpoint] {
                (0..<count).map { index in
                    // Ids and logs of different lengths, so a text bound at a wrong offset shows.
                    let moves = (0..<(index * round) % 4).map { InputLog.Entry(afterStep: 10 * round + index + $0, direction: $0 % 2 == 0 ? .left : .right) }
                    return GameCheckpoint(publicID: String(repeating: "g", count: 1 + index % 3) + String(index), steps: 100 * round + index,
                                          movesBefore: round, moves: moves, durationMilliseconds: 1000 * round + index)
                }
            }
            let rounds = [batch(1), batch(2)]
            try repository.checkpoint(rounds[0], now: start.addingTimeInterval(1))
            try repository.checkpoint(rounds[1], now: start.addingTimeInterval(2))
            let expected = rounds.enumerated().flatMap { round, checkpoints in
                checkpoints.map { [DatabaseValue.text($0.publicID), .integer(Int64($0.steps)), .integer(Int64($0.movesBefore)),
                                   .text(CheckpointLog.encode($0.moves)), .integer(Int64($0.durationMilliseconds)),
                                   .text(UTCCivilTime.text(start.addingTimeInterval(Double(round + 1))))] }
            }
            let statement = try db.prepare("SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints ORDER BY id")
            let rows = try statement.query { row in (0..<6).map { row.value(at: $0) } }
            #expect(rows == expected)
            #expect(rows.contains { $0[3] == .text("") })
        }
    }

    // Stays here: the game_checkpoints rows a compacting checkpoint leaves.
    @Test func aCompactingCheckpointLeavesOnlyTheLatestFullLogsAndWhatItDidNotCover() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db))
            try checkpointThreeGamesThenCompact(runningGames: repository, games: SQLGameRepository(executor: SQLiteExecutor(database: db)),
                                                player: player, start: start)

            let left = try db.prepare("SELECT public_id, moves_before, moves FROM game_checkpoints ORDER BY id")
                .query { [$0.value(at: 0), $0.value(at: 1), $0.value(at: 2)] }
            #expect(left == [[.text("00000000000000a2"), .integer(0), .text("")],
                             [.text("00000000000000a1"), .integer(0), .text("1L,4R")]])
        }
    }

    // Stays here: the rows a round compacted in slices leaves, deleted in parts of one row,
    // two rows, or all at once.
    @Test(arguments: [1, 2, 1_000]) func aRoundCompactedInSlicesLeavesTheFullLogsAndWhatItDidNotCover(rowsPerPart: Int) throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            try checkpointThreeGamesThenCompactInSlices(runningGames: SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db)),
                                                        games: SQLGameRepository(executor: SQLiteExecutor(database: db)), player: player, start: start,
                                                        rowsPerPart: rowsPerPart)

            let left = try db.prepare("SELECT public_id, steps, moves FROM game_checkpoints ORDER BY id")
                .query { [$0.value(at: 0), $0.value(at: 1), $0.value(at: 2)] }
            #expect(left == [[.text("00000000000000a2"), .integer(2), .text("")],
                             [.text("00000000000000a1"), .integer(7), .text("1L,4R")],
                             [.text("00000000000000a2"), .integer(4), .text("")],
                             [.text("00000000000000a4"), .integer(1), .text("")]])
        }
    }

    // Stays here: recovery leaves no game_checkpoints rows behind.
    @Test func recoveryLeavesNoCheckpointRows() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db))
            try begin(repository, "00000000000000aa", player: player, seed: 12345, level: .rapid)
            let (early, _) = RunningPlay.dodge(seed: 12345, level: .rapid, steps: 20)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: early, durationMilliseconds: 9000)],
                                      now: start.addingTimeInterval(10))
            #expect(try db.scalar("SELECT count(*) FROM game_checkpoints") != .integer(0))
            #expect(try repository.recoverAll(now: start.addingTimeInterval(300)).count == 1)
            #expect(try db.scalar("SELECT count(*) FROM game_checkpoints") == .integer(0))
        }
    }

    // Stays here: rows written by hand in the schema before migration 0005.
    @Test func migration0005KeepsEveryStoredGameAndItsBestScores() throws {
        try withTemporaryDirectory { folder in
            // The schema as released before 0005, with a stored game on the boards.
            let before = folder.appendingPathComponent("before", isDirectory: true)
            try FileManager.default.createDirectory(at: before, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: productMigrations.path) where name < "0005" {
                try FileManager.default.copyItem(at: productMigrations.appendingPathComponent(name),
                                                 to: before.appendingPathComponent(name))
            }
            let db = try openDatabase(in: folder)
            try Migrator(database: db, directory: before).migrate()
            let player = try insertPlayer(db)
            try db.prepare("""
                INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
                                   started_at, ended_at, duration_ms)
                VALUES (?, 'fast', 1, 1, '10:', 4, 10, 'crash', 0, '2026-01-15T10:00:00Z', '2026-01-15T10:00:30Z', 30000)
                """).execute([player])
            try db.prepare("""
                INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
                VALUES ('fast', 'all', 'all', ?, 4, '2026-01-15T10:00:30Z', 1)
                """).execute([player])

            let applied = try Migrator(database: db, directory: productMigrations).migrate()
            #expect(applied.map(\.identifier).contains("0005_game_ids_running_games"))
            #expect(try db.scalar("SELECT count(*) FROM best_scores") == .integer(1))
            let old = try #require(try SQLGameRepository(executor: SQLiteExecutor(database: db)).game(id: 1))
            #expect(old.publicID == nil && old.displayID == "#1" && old.score == 4)
            // The rebuilt table still cascades to the boards, and accepts the new end.
            try db.prepare("DELETE FROM games WHERE id = 1").execute()
            #expect(try db.scalar("SELECT count(*) FROM best_scores") == .integer(0))
            #expect(try db.scalar("SELECT count(*) FROM score_counts") == .integer(0))
            // Its index, and the later one of 0008.
            #expect(try db.column("SELECT name FROM pragma_index_list('games') WHERE origin = 'c'")
                    == [.text("games_one_scored_daily"), .text("games_by_player")])
            var crashed = scoredGame(player: player, score: 3, endedAt: start)
            crashed.endReason = .serverCrash
            #expect(try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(crashed).game.endReason == .serverCrash)
        }
    }
}
