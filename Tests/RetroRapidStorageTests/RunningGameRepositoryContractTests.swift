import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import RetroRapidRules
import Testing

/// The contract of `RunningGameRepository`, run against every backend in `StorageBackends.all`.
@Suite struct RunningGameRepositoryContractTests {
    let start = utc("2026-01-15T10:00:00Z")

    @discardableResult
    func begin(_ repository: any RunningGameRepository, _ id: String, player: Int64, seed: UInt64 = 7, level: SpeedLevel = .fast,
               practice: Bool = false, at: Date? = nil) throws -> QuotaStatus? {
        try beginRunningGame(repository, id, player: player, seed: seed, level: level, practice: practice, at: at ?? start)
    }

    @Test(arguments: StorageBackends.all) func anUnlimitedPlayersGameUsesNoFreePlay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            try store.repositories().entitlements.grantUnlimited(playerID: player, source: .operator, reference: "test", now: start)
            let repository = store.repositories().runningGames
            #expect(try begin(repository, "00000000000000aa", player: player)?.unlimited == true)
            #expect(try repository.running(publicID: "00000000000000aa")?.freePlay == false)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: InputLog(steps: 5, moves: []),
                                                      durationMilliseconds: 4000)], now: start.addingTimeInterval(5))
            let recovered = try repository.recoverAll(now: start.addingTimeInterval(60))
            #expect(recovered.map(\.recorded.game.endReason) == [.serverCrash])
            #expect(recovered.first?.recorded.game.playRefunded == false)
        }
    }

    @Test(arguments: StorageBackends.all) func aCheckpointThatCannotBeReplayedIsStoredEmptyAndRefunded(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().runningGames
            try begin(repository, "00000000000000aa", player: player)
            // Goes on for 500 steps without a move: past its crash, a log no game could have written.
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", steps: 500, movesBefore: 0, moves: [],
                                                      durationMilliseconds: 1000)], now: start.addingTimeInterval(1))
            let recovered = try repository.recoverAll(now: start.addingTimeInterval(60))
            #expect(recovered.first?.problem?.contains("cannot be re-simulated") == true)
            let game = try #require(recovered.first?.recorded.game)
            #expect(game.endReason == .serverCrash && game.steps == 0 && game.score == 0 && game.playRefunded)
            #expect(GameMismatch.check(game) == nil)
        }
    }

    @Test(arguments: StorageBackends.all) func checkpointsThatBreakOffEndTheGameAtTheLastOneThatFollowsOn(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().runningGames
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

    @Test(arguments: StorageBackends.all) func beginConsumesThePlayAndRecordsTheRunningGameInOneTransaction(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories(RepositorySettings(dailyFreePlays: 1))
            let repository = repositories.runningGames
            let quota = try begin(repository, "00000000000000aa", player: player, seed: 0xF00D_0000_0000_BEEF)
            #expect(quota?.playsUsed == 1)
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
            // The one play used is the game's own: resuming it takes no other (the only one was spent).
            let before = try store.dump()
            #expect(try repositories.quota.consumePlay(playerID: player, gameID: "00000000000000aa", now: start).playsUsed == 1)
            #expect(try store.dump() == before)
            #expect(try repositories.quota.status(playerID: player, now: start).playsUsed == 1)
        }
    }

    @Test(arguments: StorageBackends.all) func theFinishedGameIsStoredWithItsPublicIDAndLeavesRunningGames(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let repository = repositories.runningGames
            try begin(repository, "00000000000000aa", player: player)
            var game = scoredGame(player: player, score: 12, endedAt: start.addingTimeInterval(40))
            game.publicID = "00000000000000aa"
            let recorded = try repositories.games.record(game)
            #expect(recorded.game.publicID == "00000000000000aa")
            #expect(try repository.running().isEmpty)
            #expect(try repositories.games.game(publicID: "00000000000000aa") == recorded.game)
            #expect(try repositories.games.game(publicID: "00000000000000ff") == nil)
            // Nothing left to recover: a game is never stored twice.
            #expect(try repository.recoverAll(now: start.addingTimeInterval(100)).isEmpty)
            #expect(try repositories.games.games(playerID: player) == [recorded.game])
            // The public id is unique among stored games: a second record is refused and changes nothing.
            let before = try store.dump()
            #expect(throws: (any Error).self) { try repositories.games.record(game) }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func checkpointsJoinIntoEachGamesLog(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().runningGames
            for id in ["00000000000000a1", "00000000000000a2"] { try begin(repository, id, player: player, practice: true) }
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 4, movesBefore: 0, moves: [.init(afterStep: 3, direction: .left)],
                               durationMilliseconds: 3600),
                GameCheckpoint(publicID: "00000000000000a2", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1700),
                // A game no longer running (stored meanwhile): harmless and ignored.
                GameCheckpoint(publicID: "00000000000000a3", steps: 9, movesBefore: 0, moves: [], durationMilliseconds: 3800),
            ], now: start.addingTimeInterval(4))
            try repository.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 9, movesBefore: 1,
                               moves: [.init(afterStep: 5, direction: .right), .init(afterStep: 9, direction: .right)],
                               durationMilliseconds: 8600),
            ], now: start.addingTimeInterval(9))
            let rows = try repository.running()
            #expect(rows.map(\.inputLog) == ["9:3L,5R,9R", "2:"])
            #expect(rows.map(\.durationMilliseconds) == [8600, 1700])
            #expect(rows.map(\.checkpointedAt) == [start.addingTimeInterval(9), start.addingTimeInterval(4)])
            #expect(try repository.running(publicID: "00000000000000a1") == rows[0])
            #expect(try repository.running(publicID: "00000000000000a3") == nil)
            #expect(try repository.running(playerID: player) == rows)
        }
    }

    @Test(arguments: StorageBackends.all) func aCompactingCheckpointKeepsEveryRunningGamesLog(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let repository = repositories.runningGames
            try checkpointThreeGamesThenCompact(runningGames: repository, games: repositories.games, player: player, start: start)

            #expect(try repository.running().map(\.publicID) == ["00000000000000a1", "00000000000000a2"])
            #expect(try repository.running().map(\.inputLog) == ["7:1L,4R", "2:"])
        }
    }

    @Test(arguments: StorageBackends.all) func aRoundCompactedInSlicesKeepsEveryRunningGamesLog(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let repository = repositories.runningGames
            try checkpointThreeGamesThenCompactInSlices(runningGames: repository, games: repositories.games, player: player,
                                                        start: start)

            #expect(try repository.running().map(\.publicID) == ["00000000000000a1", "00000000000000a2", "00000000000000a4"])
            #expect(try repository.running().map(\.inputLog) == ["7:1L,4R", "4:", "1:"])
            // Nothing below the round to compact a second time: the same call changes nothing.
            let before = try store.dump()
            #expect(try compactInParts(repository, CheckpointCompaction(first: 1, covered: [], rowsPerPart: 1)) == 1)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aCompactionInPartsLooksAtEachRowOnceAndKeepsWhatItDidNotCover(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().runningGames
            try begin(repository, "00000000000000a1", player: player, practice: true)
            try begin(repository, "00000000000000a2", player: player, practice: true)
            let left = InputLog.Entry(afterStep: 1, direction: .left)
            // Five rounds of both games: ten rows, a2 making one move a round.
            for round in 1...5 {
                try repository.checkpoint([
                    GameCheckpoint(publicID: "00000000000000a1", steps: round, movesBefore: 0, moves: [], durationMilliseconds: round),
                    GameCheckpoint(publicID: "00000000000000a2", steps: round + 1, movesBefore: round - 1,
                                   moves: [InputLog.Entry(afterStep: round, direction: .right)], durationMilliseconds: round),
                ], now: start.addingTimeInterval(Double(round)))
            }
            // A round that covers a1 only (a2's save failed), then its deletion, three rows a part.
            let first = try repository.nextCheckpointRowID()
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a1", steps: 6, movesBefore: 0, moves: [left],
                                                      durationMilliseconds: 6)], now: start.addingTimeInterval(6))
            let parts = try compactInParts(repository, CheckpointCompaction(first: first, covered: ["00000000000000a1"], rowsPerPart: 3))

            #expect(parts == 4)  // 3 + 3 + 3 + 1 rows below the round
            #expect(try repository.running().map(\.inputLog) == ["6:1L", "6:1R,2R,3R,4R,5R"])
        }
    }

    @Test(arguments: StorageBackends.all) func aCompactionStartsWhereTheOneBeforeLeftNoRowBelowAndSkipsTheGaps(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().runningGames
            let a1 = "00000000000000a1", a2 = "00000000000000a2"
            try begin(repository, a1, player: player, practice: true)
            try begin(repository, a2, player: player, practice: true)
            // Five rounds of both games, a1's row first: ten rows, a2 making one move a round.
            for round in 1...5 {
                try repository.checkpoint([
                    GameCheckpoint(publicID: a1, steps: round, movesBefore: 0, moves: [], durationMilliseconds: round),
                    GameCheckpoint(publicID: a2, steps: round + 1, movesBefore: round - 1,
                                   moves: [InputLog.Entry(afterStep: round, direction: .right)], durationMilliseconds: round),
                ], now: start.addingTimeInterval(Double(round)))
            }
            // A round that covers a1 only: a2's rows stay, the lowest of them the first kept.
            let first = try repository.nextCheckpointRowID()
            let lowest = first - 10
            try repository.checkpoint([GameCheckpoint(publicID: a1, steps: 6, movesBefore: 0, moves: [InputLog.Entry(afterStep: 1, direction: .left)],
                                                      durationMilliseconds: 6)], now: start.addingTimeInterval(6))
            let (_, once) = try compactToTheEnd(repository, CheckpointCompaction(first: first, covered: [a1], rowsPerPart: 3))
            #expect(once.isFinished)
            #expect(once.lowestKept == lowest + 1)
            #expect(once.leftNothingBelow == lowest + 1)

            // The next round covers both; its compaction starts at a2's first row. One id a part:
            // a2's five rows and a1's whole log take a part each, the ids of a1's deleted rows
            // between them none.
            let second = try repository.nextCheckpointRowID()
            #expect(second == first + 1)
            try repository.checkpoint([
                GameCheckpoint(publicID: a1, steps: 7, movesBefore: 0, moves: [InputLog.Entry(afterStep: 1, direction: .left)], durationMilliseconds: 7),
                GameCheckpoint(publicID: a2, steps: 7, movesBefore: 0, moves: (1...5).map { InputLog.Entry(afterStep: $0, direction: .right) },
                               durationMilliseconds: 7),
            ], now: start.addingTimeInterval(7))
            let following = once.following(first: second, covered: [a1, a2], rowsPerPart: 1)
            #expect(following.next == lowest + 1)
            let (parts, twice) = try compactToTheEnd(repository, following)
            #expect(parts == 6)
            #expect(twice.lowestKept == nil)
            #expect(twice.leftNothingBelow == second)
            #expect(try repository.running().map(\.inputLog) == ["7:1L", "7:1R,2R,3R,4R,5R"])
            // Nothing below the second round is left to look at.
            #expect(try compactInParts(repository, CheckpointCompaction(first: second, covered: [], rowsPerPart: 1)) == 1)
        }
    }

    @Test(arguments: StorageBackends.all) func recoveryEndsARunningGameAsServerCrashFromItsLastCheckpointAndRefundsItsPlay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories(RepositorySettings(dailyFreePlays: 5))
            let repository = repositories.runningGames
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
            // The play is back, the running game gone, the score on the boards, and the replay agrees.
            #expect(try repositories.quota.status(playerID: player, now: start.addingTimeInterval(300)).playsUsed == 0)
            #expect(try repository.running().isEmpty)
            #expect(try repository.running(publicID: "00000000000000aa") == nil)
            #expect(try repositories.leaderboards.top(level: .rapid, period: .allTime, now: start.addingTimeInterval(300)).entries.map(\.score) == [state.score])
            let stored = try #require(try repositories.games.game(publicID: "00000000000000aa"))
            #expect(stored == game)
            #expect(GameMismatch.check(stored) == nil)
            #expect(try repositories.games.verifyAll().isEmpty)
            // A second start recovers nothing more.
            #expect(try repository.recoverAll(now: start.addingTimeInterval(400)).isEmpty)
        }
    }

    @Test(arguments: StorageBackends.all) func aCheckpointThatHadAlreadyCrashedIsStoredAsACrashAndKeepsItsPlay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let repository = repositories.runningGames
            try begin(repository, "00000000000000aa", player: player, seed: 99, level: .cruise)
            let (log, state) = RunningPlay.crash(seed: 99, level: .cruise)
            #expect(state.isOver)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: log, durationMilliseconds: 5000)],
                                      now: start.addingTimeInterval(6))
            let game = try #require(try repository.recoverAll(now: start.addingTimeInterval(60)).first?.recorded.game)
            #expect(game.endReason == .crash && game.score == state.score && !game.playRefunded)
            #expect(try repositories.quota.status(playerID: player, now: start.addingTimeInterval(60)).playsUsed == 1)
            #expect(GameMismatch.check(game) == nil)
        }
    }

    @Test(arguments: StorageBackends.all) func aGameStartedBeforeMidnightGivesBackThatDaysPlayNotTodays(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories(RepositorySettings(dailyFreePlays: 2))
            let repository = repositories.runningGames
            let late = utc("2026-01-15T23:59:30Z")
            try begin(repository, "00000000000000aa", player: player, at: late)
            try repository.checkpoint([GameCheckpoint(publicID: "00000000000000aa", log: InputLog(steps: 3, moves: []),
                                                      durationMilliseconds: 2000)], now: utc("2026-01-15T23:59:33Z"))
            // The next day the player already used one of that day's plays.
            try repositories.quota.consumePlay(playerID: player, now: utc("2026-01-16T08:00:00Z"))
            let recovered = try repository.recoverAll(now: utc("2026-01-16T09:00:00Z"))
            #expect(recovered.first?.recorded.game.playRefunded == true)
            #expect(recovered.first?.recorded.game.endedAt == utc("2026-01-15T23:59:33Z"))
            // The play given back is the 15th's; the 16th's stays.
            #expect(try repositories.quota.status(playerID: player, now: utc("2026-01-15T23:59:59Z")).playsUsed == 0)
            let today = try repositories.quota.status(playerID: player, now: utc("2026-01-16T09:00:00Z"))
            #expect(today.playsUsed == 1)
            // Its score counts for the day it was played.
            let boards = repositories.leaderboards
            #expect(try boards.top(level: .fast, period: .today, now: utc("2026-01-15T23:59:59Z")).entries.map(\.playerPublicID) == ["p-1"])
            #expect(try boards.top(level: .fast, period: .today, now: utc("2026-01-16T09:00:00Z")).entries.isEmpty)
        }
    }

    /// Begins `id` for `player` at `at` and checkpoints three steps: a game the server can lose.
    func loseToACrash(_ repository: any RunningGameRepository, _ id: String, player: Int64, at: Date) throws {
        try begin(repository, id, player: player, at: at)
        try repository.checkpoint([GameCheckpoint(publicID: id, log: InputLog(steps: 3, moves: []), durationMilliseconds: 2000)],
                                  now: at.addingTimeInterval(3))
    }

    @Test(arguments: StorageBackends.all) func twoGamesOfOnePlayerLostToCrashesOnOneDayGiveBackOnePlay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let other = try store.addPlayer("p-2")
            let repositories = store.repositories(RepositorySettings(dailyFreePlays: 5))
            let repository = repositories.runningGames
            func used(_ who: Int64, _ at: Date) throws -> Int { try repositories.quota.status(playerID: who, now: at).playsUsed }

            // The first crash of the day gives the play back.
            try loseToACrash(repository, "00000000000000a1", player: player, at: start)
            let first = try repository.recoverAll(now: start.addingTimeInterval(60)).map(\.recorded.game)
            #expect(first.map(\.playRefunded) == [true])
            #expect(try used(player, start.addingTimeInterval(60)) == 0)

            // The second the same day is stored the same, score and all, but the play stays spent.
            try loseToACrash(repository, "00000000000000a2", player: player, at: start.addingTimeInterval(120))
            let second = try repository.recoverAll(now: start.addingTimeInterval(180)).map(\.recorded.game)
            #expect(second.map(\.endReason) == [.serverCrash] && second.map(\.playRefunded) == [false])
            #expect(try used(player, start.addingTimeInterval(180)) == 1)
            #expect(try repositories.games.game(publicID: "00000000000000a2")?.playRefunded == false)

            // Two lost in one recovery, beside another player's: the cap is the player's, not the crash's.
            try loseToACrash(repository, "00000000000000a3", player: player, at: start.addingTimeInterval(240))
            try loseToACrash(repository, "00000000000000b1", player: other, at: start.addingTimeInterval(241))
            let third = try repository.recoverAll(now: start.addingTimeInterval(300))
            #expect(third.map(\.recorded.game.publicID) == ["00000000000000a3", "00000000000000b1"])
            #expect(third.map(\.recorded.game.playRefunded) == [false, true])
            #expect(try used(player, start.addingTimeInterval(300)) == 2 && used(other, start.addingTimeInterval(300)) == 0)

            // A new UTC day has a refund of its own.
            let tomorrow = start.addingTimeInterval(86_400)
            try loseToACrash(repository, "00000000000000a4", player: player, at: tomorrow)
            #expect(try repository.recoverAll(now: tomorrow.addingTimeInterval(60)).map(\.recorded.game.playRefunded) == [true])
            #expect(try used(player, tomorrow.addingTimeInterval(60)) == 0)
            #expect(try repositories.games.verifyAll().isEmpty)
        }
    }

    @Test(arguments: StorageBackends.all) func recoveringOneGameFollowsTheSameRulesAndCap(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories(RepositorySettings(dailyFreePlays: 5))
            let repository = repositories.runningGames
            try loseToACrash(repository, "00000000000000a1", player: player, at: start)
            let first = try #require(try repository.recover(publicID: "00000000000000a1", now: start.addingTimeInterval(60)))
            #expect(first.recorded.game.endReason == .serverCrash && first.recorded.game.playRefunded && first.recorded.game.steps == 3)
            #expect(try repository.running().isEmpty)
            // Stored once: a second call finds nothing and changes nothing.
            let before = try store.dump()
            #expect(try repository.recover(publicID: "00000000000000a1", now: start.addingTimeInterval(61)) == nil)
            #expect(try store.dump() == before)

            // A second game lost the same day (a restart's recoverAll or a sweep's recover) keeps its play spent.
            try loseToACrash(repository, "00000000000000a2", player: player, at: start.addingTimeInterval(120))
            let second = try #require(try repository.recover(publicID: "00000000000000a2", now: start.addingTimeInterval(180)))
            #expect(second.recorded.game.endReason == .serverCrash && !second.recorded.game.playRefunded)
            #expect(try repositories.quota.status(playerID: player, now: start.addingTimeInterval(180)).playsUsed == 1)
            #expect(try repository.running().isEmpty)
        }
    }

    @Test(arguments: StorageBackends.all) func cancellingAGameThatNeverRanGivesBackItsPlay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let repository = repositories.runningGames
            try begin(repository, "00000000000000aa", player: player)
            #expect(try repository.cancel(publicID: "00000000000000aa"))
            #expect(try repository.running().isEmpty)
            #expect(try repositories.quota.status(playerID: player, now: start).playsUsed == 0)
            #expect(try !repository.cancel(publicID: "00000000000000aa"))
        }
    }
}
