import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Games while they run (`running_games`) and their recovery after a crash of the server, on
/// real database files migrated with the product's `Migrations/`.
@Suite struct SQLiteRunningGameRepositoryTests {
    let start = utc("2026-01-15T10:00:00Z")

    @discardableResult
    func begin(_ repository: RunningGameRepository, _ id: String, player: Int64, seed: UInt64 = 7, level: SpeedLevel = .fast,
               practice: Bool = false, at: Date? = nil) throws -> QuotaStatus? {
        try repository.begin(RunningGameStart(publicID: id, playerID: player, level: level, seed: seed, practice: practice,
                                              startedAt: at ?? start))
    }

    @Test func checkpointsThatBreakOffEndTheGameAtTheLastOneThatFollowsOn() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db, "p-1")
            let repository = SQLiteRunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player, seed: 5)
            let (early, earlyState) = RunningPlay.dodge(seed: 5, level: .fast, steps: 10)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: early, durationMilliseconds: 6000)],
                                      now: start.addingTimeInterval(6))
            // Claims moves the table never had.
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", steps: 12, movesBefore: early.moves.count + 3,
                                                      moves: [], durationMilliseconds: 7000)], now: start.addingTimeInterval(7))
            let recovered = try #require(try repository.recoverAll(now: start.addingTimeInterval(60)).first)
            #expect(recovered.problem?.contains("break off") == true)
            #expect(recovered.recorded.game.steps == 10 && recovered.recorded.game.score == earlyState.score)
            #expect(recovered.recorded.game.endedAt == start.addingTimeInterval(6))
        }
    }

    @Test func beginConsumesThePlayAndRecordsTheRunningGameInOneTransaction() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db, dailyFreePlays: 1)
            let quota = try begin(repository, "00000000000000aa", player: player, seed: 0xF00D_0000_0000_BEEF)
            #expect(quota?.playsUsed == 1)
            #expect(try db.column("SELECT game_id FROM plays") == [.text("00000000000000aa")])
            let running = try repository.running(publicID: "00000000000000aa")
            #expect(running == RunningGameRecord(
                publicID: "00000000000000aa", playerID: player, level: .fast, seed: 0xF00D_0000_0000_BEEF,
                rulesVersion: GameRules.version, practice: false, freePlay: true, startedAt: start, inputLog: "0:",
                durationMilliseconds: 0, checkpointedAt: start))

            // No play left: refused, and no second running game appears.
            #expect(throws: QuotaExhaustedError.self) { try begin(repository, "00000000000000bb", player: player) }
            #expect(try repository.running().map(\.publicID) == ["00000000000000aa"])
            // Practice takes no play.
            #expect(try begin(repository, "00000000000000cc", player: player, practice: true) == nil)
            #expect(try repository.running(publicID: "00000000000000cc")?.freePlay == false)
            #expect(try db.scalar("SELECT count(*) FROM plays") == .integer(1))
        }
    }

    @Test func theFinishedGameIsStoredWithItsPublicIDAndLeavesRunningGames() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player)
            var game = scoredGame(player: player, score: 12, endedAt: start.addingTimeInterval(40))
            game.publicID = "00000000000000aa"
            let recorded = try SQLiteGameRepository(database: db).record(game)
            #expect(recorded.game.publicID == "00000000000000aa")
            #expect(try repository.running().isEmpty)
            #expect(try SQLiteGameRepository(database: db).game(publicID: "00000000000000aa") == recorded.game)
            #expect(try SQLiteGameRepository(database: db).game(publicID: "00000000000000ff") == nil)
            // Nothing left to recover: a game is never stored twice.
            #expect(try repository.recoverAll(now: start.addingTimeInterval(100)).isEmpty)
            #expect(try db.scalar("SELECT count(*) FROM games") == .integer(1))
            // The public id is unique among stored games.
            let again = #expect(throws: DatabaseError.self) { try SQLiteGameRepository(database: db).record(game) }
            #expect(again?.isUniqueViolation == true)
        }
    }

    @Test func checkpointsAppendWhatChangedAndJoinIntoEachGamesLog() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db)
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
            // Only the new moves were written: rows are appended, never rewritten.
            #expect(try db.column("SELECT moves FROM game_checkpoints ORDER BY id") == [.text("3L"), .text(""), .text(""), .text("5R,9R")])
            let rows = try repository.running()
            #expect(rows.map(\.inputLog) == ["9:3L,5R,9R", "2:"])
            #expect(rows.map(\.durationMilliseconds) == [8600, 1700])
            #expect(rows.map(\.checkpointedAt) == [start.addingTimeInterval(9), start.addingTimeInterval(4)])
            #expect(try repository.running(publicID: "00000000000000a1") == rows[0])
            #expect(try repository.running(playerID: player) == rows)
        }
    }

    @Test func aCompactingCheckpointLeavesOnlyTheLatestFullLogsAndWhatItDidNotCover() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db)
            for id in ["00000000000000a1", "00000000000000a2", "00000000000000a3"] {
                try begin(repository, id, player: player, practice: true)
            }
            let move = InputLog.Entry(afterStep: 1, direction: .left)
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 3, movesBefore: 0, moves: [move], durationMilliseconds: 1),
                GameCheckpoint(publicID: "00000000000000a2", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1),
                GameCheckpoint(publicID: "00000000000000a3", steps: 5, movesBefore: 0, moves: [], durationMilliseconds: 1),
            ], now: start.addingTimeInterval(1))
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a1", steps: 6, movesBefore: 1,
                                                      moves: [.init(afterStep: 4, direction: .right)], durationMilliseconds: 2)],
                                      now: start.addingTimeInterval(2))
            // a3 ends and is stored; a2's save failed, so the server no longer has it but its row stays.
            var ended = scoredGame(player: player, score: 0, endedAt: start.addingTimeInterval(3))
            ended.publicID = "00000000000000a3"
            ended.practice = true
            try SQLiteGameRepository(database: db).record(ended)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a1", log: InputLog(steps: 7, moves: [
                move, .init(afterStep: 4, direction: .right)]), durationMilliseconds: 3)], compacting: true, now: start.addingTimeInterval(3))

            let left = try db.prepare("SELECT public_id, moves_before, moves FROM game_checkpoints ORDER BY id")
                .query { [$0.value(at: 0), $0.value(at: 1), $0.value(at: 2)] }
            #expect(left == [[.text("00000000000000a2"), .integer(0), .text("")],
                             [.text("00000000000000a1"), .integer(0), .text("1L,4R")]])
            #expect(try repository.running().map(\.inputLog) == ["7:1L,4R", "2:"])
        }
    }

    @Test func recoveryEndsARunningGameAsServerCrashFromItsLastCheckpointAndRefundsItsPlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db, dailyFreePlays: 5)
            let seed: UInt64 = 12345
            try begin(repository, "00000000000000aa", player: player, seed: seed, level: .rapid)
            let (early, _) = RunningPlay.dodge(seed: seed, level: .rapid, steps: 20)
            let (log, state) = RunningPlay.dodge(seed: seed, level: .rapid, steps: 60)
            #expect(!state.isOver && state.score > 0)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: early, durationMilliseconds: 9000)],
                                      now: start.addingTimeInterval(10))
            #expect(Array(log.moves.prefix(early.moves.count)) == early.moves)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", steps: 60, movesBefore: early.moves.count,
                                                      moves: Array(log.moves.dropFirst(early.moves.count)), durationMilliseconds: 25_500)],
                                      now: start.addingTimeInterval(26))

            let recovered = try repository.recoverAll(now: start.addingTimeInterval(300))
            #expect(recovered.count == 1)
            let game = try #require(recovered.first?.recorded.game)
            #expect(recovered.first?.problem == nil)
            #expect(game.publicID == "00000000000000aa")
            #expect(game.endReason == .serverCrash)
            #expect(game.score == state.score && game.steps == 60 && game.inputLog == log.encoded)
            #expect(game.endedAt == start.addingTimeInterval(26))  // the checkpoint, not the restart
            #expect(game.durationMilliseconds == 25_500)
            #expect(game.playRefunded)
            // The play is back, the running row gone, the score on the boards, and the replay agrees.
            #expect(try SQLiteQuotaRepository(database: db).status(playerID: player, now: start.addingTimeInterval(300)).playsUsed == 0)
            #expect(try repository.running().isEmpty)
            #expect(try db.scalar("SELECT count(*) FROM game_checkpoints") == .integer(0))
            #expect(try db.scalar("SELECT max(score) FROM best_scores WHERE level = 'rapid'") == .integer(Int64(state.score)))
            let stored = try #require(try SQLiteGameRepository(database: db).game(publicID: "00000000000000aa"))
            #expect(stored == game)
            #expect(GameMismatch.check(stored) == nil)
            #expect(try SQLiteGameRepository(database: db).verifyAll().isEmpty)
            // A second start recovers nothing more.
            #expect(try repository.recoverAll(now: start.addingTimeInterval(400)).isEmpty)
        }
    }

    @Test func aCheckpointThatHadAlreadyCrashedIsStoredAsACrashAndKeepsItsPlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player, seed: 99, level: .cruise)
            let (log, state) = RunningPlay.crash(seed: 99, level: .cruise)
            #expect(state.isOver)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: log, durationMilliseconds: 5000)],
                                      now: start.addingTimeInterval(6))
            let game = try #require(try repository.recoverAll(now: start.addingTimeInterval(60)).first?.recorded.game)
            #expect(game.endReason == .crash && game.score == state.score && !game.playRefunded)
            #expect(try db.scalar("SELECT count(*) FROM plays") == .integer(1))
            #expect(GameMismatch.check(game) == nil)
        }
    }

    @Test func aGameStartedBeforeMidnightGivesBackThatDaysPlayNotTodays() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db, dailyFreePlays: 2)
            let late = utc("2026-01-15T23:59:30Z")
            try begin(repository, "00000000000000aa", player: player, at: late)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: InputLog(steps: 3, moves: []),
                                                      durationMilliseconds: 2000)], now: utc("2026-01-15T23:59:33Z"))
            // The next day the player already used one of that day's plays.
            try SQLiteQuotaRepository(database: db, dailyFreePlays: 2).consumePlay(playerID: player, now: utc("2026-01-16T08:00:00Z"))
            let recovered = try repository.recoverAll(now: utc("2026-01-16T09:00:00Z"))
            #expect(recovered.first?.recorded.game.playRefunded == true)
            #expect(recovered.first?.recorded.game.endedAt == utc("2026-01-15T23:59:33Z"))
            #expect(try db.column("SELECT day FROM plays") == [.text("2026-01-16")])
            let today = try SQLiteQuotaRepository(database: db, dailyFreePlays: 2).status(playerID: player, now: utc("2026-01-16T09:00:00Z"))
            #expect(today.playsUsed == 1)
            // Its score counts for the day it was played.
            #expect(try db.column("SELECT period_key FROM best_scores WHERE period = 'day'") == [.text("2026-01-15")])
        }
    }

    @Test func cancellingAGameThatNeverRanGivesBackItsPlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteRunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player)
            #expect(try repository.cancel(publicID: "00000000000000aa"))
            #expect(try repository.running().isEmpty)
            #expect(try db.scalar("SELECT count(*) FROM plays") == .integer(0))
            #expect(try !repository.cancel(publicID: "00000000000000aa"))
        }
    }

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
            let old = try #require(try SQLiteGameRepository(database: db).game(id: 1))
            #expect(old.publicID == nil && old.displayID == "#1" && old.score == 4)
            // The rebuilt table still cascades to the boards, and accepts the new end.
            try db.prepare("DELETE FROM games WHERE id = 1").execute()
            #expect(try db.scalar("SELECT count(*) FROM best_scores") == .integer(0))
            #expect(try db.scalar("SELECT count(*) FROM score_counts") == .integer(0))
            #expect(try db.column("SELECT name FROM pragma_index_list('games') WHERE origin = 'c'") == [.text("games_by_player")])
            var crashed = scoredGame(player: player, score: 3, endedAt: start)
            crashed.endReason = .serverCrash
            #expect(try SQLiteGameRepository(database: db).record(crashed).game.endReason == .serverCrash)
        }
    }
}

/// Real games for the checkpoints: the cue-following player of GameRepositoryTests.
enum RunningPlay {
    /// Follows the safe-lane cue for `steps` steps; the game is still running after them.
    static func dodge(seed: UInt64, level: SpeedLevel, steps: Int) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        var moves: [InputLog.Entry] = []
        while state.step < steps, !state.isOver {
            if !state.safeLanes.contains(state.lane), !state.safeLanes.isEmpty {
                let direction: Direction = state.safeLanes.rawValue < LaneSet(lane: state.lane).rawValue ? .left : .right
                moves.append(InputLog.Entry(afterStep: state.step, direction: direction))
                state.move(direction, into: &sink)
            }
            state.advance(into: &sink)
        }
        return (InputLog(steps: state.step, moves: moves), state)
    }

    /// Never moves: the first car in its lane ends it.
    static func crash(seed: UInt64, level: SpeedLevel) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        while !state.isOver { state.advance(into: &sink) }
        return (InputLog(steps: state.step, moves: []), state)
    }
}
