import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidRules
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

/// Running games where only SQL can check (the game_checkpoints rows, PostgreSQL's unique
/// violation), as Tests/RetroRapidSQLiteTests/SQLiteRunningGameRepositoryTests.swift does for
/// SQLite; the rules are in Tests/RetroRapidStorageTests/RunningGameRepositoryContractTests.swift.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresRunningGameRowsTests {
    let start = utc("2026-01-15T10:00:00Z")

    @Test func aSecondRecordOfOnePublicIDIsAUniqueViolation() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            try beginRunningGame(SQLRunningGameRepository(postgres: connection), "00000000000000aa", player: player, at: start)
            var game = scoredGame(player: player, score: 12, endedAt: start.addingTimeInterval(40))
            game.publicID = "00000000000000aa"
            try SQLGameRepository(executor: connection).record(game)
            let again = #expect(throws: PostgresError.self) { try SQLGameRepository(executor: connection).record(game) }
            #expect(again?.isUniqueViolation == true)
            #expect(!connection.isInTransaction)
            #expect(try connection.execute("SELECT count(*) FROM games").first?.int(at: 0) == 1)
        }
    }

    @Test func checkpointsAppendOnlyWhatChanged() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let repository = SQLRunningGameRepository(postgres: connection)
            for id in ["00000000000000a1", "00000000000000a2"] { try beginRunningGame(repository, id, player: player, practice: true, at: start) }
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 4, movesBefore: 0, moves: [.init(afterStep: 3, direction: .left)],
                               durationMilliseconds: 3600),
                GameCheckpoint(publicID: "00000000000000a2", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1700),
                GameCheckpoint(publicID: "00000000000000a3", steps: 9, movesBefore: 0, moves: [], durationMilliseconds: 3800),
            ], now: start.addingTimeInterval(4))
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 9, movesBefore: 1,
                               moves: [.init(afterStep: 5, direction: .right), .init(afterStep: 9, direction: .right)],
                               durationMilliseconds: 8600),
            ], now: start.addingTimeInterval(9))
            let rows = try connection.execute("SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints ORDER BY id")
                .map { $0.cells.map { $0 ?? "NULL" } }
            #expect(rows == [
                ["00000000000000a1", "4", "0", "3L", "3600", "2026-01-15T10:00:04Z"],
                ["00000000000000a2", "2", "0", "", "1700", "2026-01-15T10:00:04Z"],
                ["00000000000000a3", "9", "0", "", "3800", "2026-01-15T10:00:04Z"],
                ["00000000000000a1", "9", "1", "5R,9R", "8600", "2026-01-15T10:00:09Z"],
            ])
        }
    }

    @Test func aCompactingCheckpointLeavesOnlyTheLatestFullLogsAndWhatItDidNotCover() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            try checkpointThreeGamesThenCompact(runningGames: SQLRunningGameRepository(postgres: connection),
                                                games: SQLGameRepository(executor: connection), player: player, start: start)
            let left = try connection.execute("SELECT public_id, moves_before, moves FROM game_checkpoints ORDER BY id")
                .map { $0.cells.map { $0 ?? "NULL" } }
            #expect(left == [["00000000000000a2", "0", ""], ["00000000000000a1", "0", "1L,4R"]])
        }
    }

    @Test(arguments: [1, 2, 1_000]) func aRoundCompactedInSlicesLeavesTheFullLogsAndWhatItDidNotCover(rowsPerPart: Int) throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            try checkpointThreeGamesThenCompactInSlices(runningGames: SQLRunningGameRepository(postgres: connection),
                                                        games: SQLGameRepository(executor: connection), player: player,
                                                        start: start, rowsPerPart: rowsPerPart)
            let left = try connection.execute("SELECT public_id, steps, moves FROM game_checkpoints ORDER BY id")
                .map { $0.cells.map { $0 ?? "NULL" } }
            #expect(left == [["00000000000000a2", "2", ""], ["00000000000000a1", "7", "1L,4R"],
                             ["00000000000000a2", "4", ""], ["00000000000000a4", "1", ""]])
        }
    }

    /// A game's rows are found through an index keyed by the game alone, so a round's rows
    /// share their games' entries instead of each making one (docs/BENCHMARKS.md,
    /// "Checkpoints on PostgreSQL").
    @Test func aGamesCheckpointsAreIndexedByTheGameAlone() throws {
        try withRaceDatabase { _, connection in
            let definition = try connection.execute(
                "SELECT indexdef FROM pg_indexes WHERE tablename = 'game_checkpoints' AND indexname = 'game_checkpoints_by_game'"
            ).first?.string(at: 0)
            #expect(definition?.hasSuffix("(public_id)") == true, "\(definition ?? "no index")")
        }
    }

    @Test func anEmptyCompactingCheckpointKeepsEveryRunningGamesRowsAndDropsTheRest() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let repository = SQLRunningGameRepository(postgres: connection)
            try beginRunningGame(repository, "00000000000000a1", player: player, practice: true, at: start)
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1),
                GameCheckpoint(publicID: "00000000000000ff", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1),
            ], now: start.addingTimeInterval(1))
            try repository.checkpoint([], compacting: true, now: start.addingTimeInterval(2))
            #expect(try connection.execute("SELECT public_id FROM game_checkpoints").map { $0.string(at: 0) } == ["00000000000000a1"])
        }
    }

    @Test func recoveryLeavesNoCheckpointRows() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let repository = SQLRunningGameRepository(postgres: connection)
            try beginRunningGame(repository, "00000000000000aa", player: player, seed: 12345, level: .rapid, at: start)
            let (early, _) = RunningPlay.dodge(seed: 12345, level: .rapid, steps: 20)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: early, durationMilliseconds: 9000),
                                       GameCheckpoint(publicID: "00000000000000ff", log: early, durationMilliseconds: 9000)],
                                      now: start.addingTimeInterval(10))
            #expect(try connection.execute("SELECT count(*) FROM game_checkpoints").first?.int(at: 0) == 2)
            #expect(try repository.recoverAll(now: start.addingTimeInterval(300)).count == 1)
            #expect(try connection.execute("SELECT count(*) FROM game_checkpoints").first?.int(at: 0) == 0)
            #expect(try connection.execute("SELECT count(*) FROM running_games").first?.int(at: 0) == 0)
        }
    }
}
