import Foundation
import RetroRapidRules
import RetroRapidStorage
import Testing

/// Games while they run (`running_games`) and their recovery after a crash of the server, on
/// real database files migrated with the product's `Migrations/`.
@Suite struct RunningGameRepositoryTests {
    let start = utc("2026-01-15T10:00:00Z")

    @discardableResult
    func begin(_ repository: RunningGameRepository, _ id: String, player: Int64, seed: UInt64 = 7, level: SpeedLevel = .fast,
               practice: Bool = false, at: Date? = nil) throws -> QuotaStatus? {
        try repository.begin(RunningGameStart(publicID: id, playerID: player, level: level, seed: seed, practice: practice,
                                              startedAt: at ?? start))
    }

    @Test func beginConsumesThePlayAndRecordsTheRunningGameInOneTransaction() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db, dailyFreePlays: 1)
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

    @Test func anUnlimitedPlayersGameUsesNoFreePlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            try EntitlementRepository(database: db).grantUnlimited(playerID: player, source: .operator, reference: "test", now: start)
            let repository = RunningGameRepository(database: db)
            #expect(try begin(repository, "00000000000000aa", player: player)?.unlimited == true)
            #expect(try repository.running(publicID: "00000000000000aa")?.freePlay == false)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", inputLog: InputLog(steps: 5, moves: []),
                                                      durationMilliseconds: 4000)], now: start.addingTimeInterval(5))
            let recovered = try repository.recoverAll(now: start.addingTimeInterval(60))
            #expect(recovered.map(\.recorded.game.endReason) == [.serverCrash])
            #expect(recovered.first?.recorded.game.playRefunded == false)
        }
    }

    @Test func theFinishedGameIsStoredWithItsPublicIDAndLeavesRunningGames() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player)
            var game = scoredGame(player: player, score: 12, endedAt: start.addingTimeInterval(40))
            game.publicID = "00000000000000aa"
            let recorded = try GameRepository(database: db).record(game)
            #expect(recorded.game.publicID == "00000000000000aa")
            #expect(try repository.running().isEmpty)
            #expect(try GameRepository(database: db).game(publicID: "00000000000000aa") == recorded.game)
            #expect(try GameRepository(database: db).game(publicID: "00000000000000ff") == nil)
            // Nothing left to recover: a game is never stored twice.
            #expect(try repository.recoverAll(now: start.addingTimeInterval(100)).isEmpty)
            #expect(try db.scalar("SELECT count(*) FROM games") == .integer(1))
            // The public id is unique among stored games.
            let again = #expect(throws: DatabaseError.self) { try GameRepository(database: db).record(game) }
            #expect(again?.isUniqueViolation == true)
        }
    }

    @Test func aCheckpointSavesEveryGameOfTheBatchAndSkipsGamesNoLongerRunning() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db)
            for id in ["00000000000000a1", "00000000000000a2"] { try begin(repository, id, player: player, practice: true) }
            let log = InputLog(steps: 9, moves: [.init(afterStep: 3, direction: .left)])
            let updated = try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", inputLog: log, durationMilliseconds: 3600),
                GameCheckpoint(publicID: "00000000000000a2", inputLog: log, durationMilliseconds: 3700),
                GameCheckpoint(publicID: "00000000000000a3", inputLog: log, durationMilliseconds: 3800),
            ], now: start.addingTimeInterval(4))
            #expect(updated == 2)
            let rows = try repository.running()
            #expect(rows.map(\.inputLog) == ["9:3L", "9:3L"])
            #expect(rows.map(\.durationMilliseconds) == [3600, 3700])
            #expect(rows.allSatisfy { $0.checkpointedAt == start.addingTimeInterval(4) })
        }
    }

    @Test func recoveryEndsARunningGameAsServerCrashFromItsLastCheckpointAndRefundsItsPlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db, dailyFreePlays: 5)
            let seed: UInt64 = 12345
            try begin(repository, "00000000000000aa", player: player, seed: seed, level: .rapid)
            let (early, _) = RunningPlay.dodge(seed: seed, level: .rapid, steps: 20)
            let (log, state) = RunningPlay.dodge(seed: seed, level: .rapid, steps: 60)
            #expect(!state.isOver && state.score > 0)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", inputLog: early, durationMilliseconds: 9000)],
                                      now: start.addingTimeInterval(10))
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", inputLog: log, durationMilliseconds: 25_500)],
                                      now: start.addingTimeInterval(26))

            let recovered = try repository.recoverAll(now: start.addingTimeInterval(300))
            #expect(recovered.count == 1)
            let game = try #require(recovered.first?.recorded.game)
            #expect(recovered.first?.unreplayable == nil)
            #expect(game.publicID == "00000000000000aa")
            #expect(game.endReason == .serverCrash)
            #expect(game.score == state.score && game.steps == 60 && game.inputLog == log.encoded)
            #expect(game.endedAt == start.addingTimeInterval(26))  // the checkpoint, not the restart
            #expect(game.durationMilliseconds == 25_500)
            #expect(game.playRefunded)
            // The play is back, the running row gone, the score on the boards, and the replay agrees.
            #expect(try QuotaRepository(database: db).status(playerID: player, now: start.addingTimeInterval(300)).playsUsed == 0)
            #expect(try repository.running().isEmpty)
            #expect(try db.scalar("SELECT max(score) FROM best_scores WHERE level = 'rapid'") == .integer(Int64(state.score)))
            let stored = try #require(try GameRepository(database: db).game(publicID: "00000000000000aa"))
            #expect(stored == game)
            #expect(GameRepository.verify(stored) == nil)
            #expect(try GameRepository(database: db).verifyAll().isEmpty)
            // A second start recovers nothing more.
            #expect(try repository.recoverAll(now: start.addingTimeInterval(400)).isEmpty)
        }
    }

    @Test func aCheckpointThatHadAlreadyCrashedIsStoredAsACrashAndKeepsItsPlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player, seed: 99, level: .cruise)
            let (log, state) = RunningPlay.crash(seed: 99, level: .cruise)
            #expect(state.isOver)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", inputLog: log, durationMilliseconds: 5000)],
                                      now: start.addingTimeInterval(6))
            let game = try #require(try repository.recoverAll(now: start.addingTimeInterval(60)).first?.recorded.game)
            #expect(game.endReason == .crash && game.score == state.score && !game.playRefunded)
            #expect(try db.scalar("SELECT count(*) FROM plays") == .integer(1))
            #expect(GameRepository.verify(game) == nil)
        }
    }

    @Test func aGameStartedBeforeMidnightGivesBackThatDaysPlayNotTodays() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db, dailyFreePlays: 2)
            let late = utc("2026-01-15T23:59:30Z")
            try begin(repository, "00000000000000aa", player: player, at: late)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", inputLog: InputLog(steps: 3, moves: []),
                                                      durationMilliseconds: 2000)], now: utc("2026-01-15T23:59:33Z"))
            // The next day the player already used one of that day's plays.
            try QuotaRepository(database: db, dailyFreePlays: 2).consumePlay(playerID: player, now: utc("2026-01-16T08:00:00Z"))
            let recovered = try repository.recoverAll(now: utc("2026-01-16T09:00:00Z"))
            #expect(recovered.first?.recorded.game.playRefunded == true)
            #expect(recovered.first?.recorded.game.endedAt == utc("2026-01-15T23:59:33Z"))
            #expect(try db.column("SELECT day FROM plays") == [.text("2026-01-16")])
            let today = try QuotaRepository(database: db, dailyFreePlays: 2).status(playerID: player, now: utc("2026-01-16T09:00:00Z"))
            #expect(today.playsUsed == 1)
            // Its score counts for the day it was played.
            #expect(try db.column("SELECT period_key FROM best_scores WHERE period = 'day'") == [.text("2026-01-15")])
        }
    }

    @Test func aCheckpointThatCannotBeReplayedIsStoredEmptyAndRefunded() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db)
            try begin(repository, "00000000000000aa", player: player)
            // Moves into a car and on past the crash: a log no game could have written.
            try db.prepare("UPDATE running_games SET input_log = '500:0L,0L,0L,0L'").execute()
            let recovered = try repository.recoverAll(now: start.addingTimeInterval(60))
            #expect(recovered.first?.unreplayable != nil)
            let game = try #require(recovered.first?.recorded.game)
            #expect(game.endReason == .serverCrash && game.steps == 0 && game.score == 0 && game.playRefunded)
            #expect(GameRepository.verify(game) == nil)
        }
    }

    @Test func cancellingAGameThatNeverRanGivesBackItsPlay() throws {
        try withMigratedDatabase(named: "running.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = RunningGameRepository(database: db)
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
            let old = try #require(try GameRepository(database: db).game(id: 1))
            #expect(old.publicID == nil && old.displayID == "#1" && old.score == 4)
            // The rebuilt table still cascades to the boards, and accepts the new end.
            try db.prepare("DELETE FROM games WHERE id = 1").execute()
            #expect(try db.scalar("SELECT count(*) FROM best_scores") == .integer(0))
            #expect(try db.scalar("SELECT count(*) FROM score_counts") == .integer(0))
            #expect(try db.column("SELECT name FROM pragma_index_list('games') WHERE origin = 'c'") == [.text("games_by_player")])
            var crashed = scoredGame(player: player, score: 3, endedAt: start)
            crashed.endReason = .serverCrash
            #expect(try GameRepository(database: db).record(crashed).game.endReason == .serverCrash)
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
