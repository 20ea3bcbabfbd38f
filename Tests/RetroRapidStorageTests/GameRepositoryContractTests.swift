import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import RetroRapidRules
import Testing

/// The contract of `GameRepository`, run against every backend in `StorageBackends.all`.
@Suite struct GameRepositoryContractTests {
    let start = utc("2026-01-15T10:00:00Z")

    @Test(arguments: StorageBackends.all) func recordReturnsThePersonalBestAndRankOnEachBoard(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("ann")
            let bob = try store.addPlayer("bob")
            let repository = store.repositories().games
            try repository.record(scoredGame(player: bob, score: 70, endedAt: start))
            let first = try repository.record(scoredGame(player: ann, score: 50, endedAt: start.addingTimeInterval(10)))
            #expect(first.standings.map(\.period) == [.today, .thisWeek, .allTime])
            #expect(first.standings.map(\.periodKey) == ["2026-01-15", "2026-W03", "all"])
            #expect(first.standings.allSatisfy { $0.personalBest == 50 && $0.isNewBest && $0.rank == 2 && $0.level == .fast })

            let better = try repository.record(scoredGame(player: ann, score: 90, endedAt: start.addingTimeInterval(20)))
            #expect(better.standing(.today) == LeaderboardStanding(level: .fast, period: .today, periodKey: "2026-01-15", personalBest: 90, isNewBest: true, rank: 1))
            #expect(better.standing(.allTime)?.rank == 1)
        }
    }

    @Test(arguments: StorageBackends.all) func abandonedAndShutdownGamesCountLikeCrashes(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repository = store.repositories().games
            var game = scoredGame(player: ann, score: 12, endedAt: start)
            game.endReason = .shutdown
            #expect(try repository.record(game).standing(.allTime)?.personalBest == 12)
            game.endReason = .abandoned
            game.score = 15
            #expect(try repository.record(game).standing(.allTime)?.personalBest == 15)
        }
    }

    /// Invalid games and unknown players are refused before anything is written.
    @Test(arguments: StorageBackends.all) func anInvalidGameIsRefusedAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repository = store.repositories().games
            try repository.record(scoredGame(player: ann, score: 5, endedAt: start))
            let before = try store.dump()

            var cases: [(NewGame, StoreError.Code, String?)] = []
            var game = scoredGame(player: ann, score: 10, endedAt: start)
            game.steps += 1
            cases.append((game, .invalid, "steps"))
            game = scoredGame(player: ann, score: -1, endedAt: start)
            cases.append((game, .invalid, "score"))
            game = scoredGame(player: ann, score: 10, endedAt: start)
            game.score = 2 * game.steps + 1
            cases.append((game, .invalid, "score"))
            game = scoredGame(player: ann, score: 10, endedAt: start)
            game.endedAt = game.startedAt.addingTimeInterval(-1)
            cases.append((game, .invalid, "endedAt"))
            game = scoredGame(player: ann, score: 10, endedAt: start)
            game.durationMilliseconds = Int(game.endedAt.timeIntervalSince(game.startedAt) * 1000) + 5000
            cases.append((game, .invalid, "durationMilliseconds"))
            game = scoredGame(player: ann, score: 10, endedAt: start)
            game.durationMilliseconds = -1
            cases.append((game, .invalid, "durationMilliseconds"))
            game = scoredGame(player: ann, score: 10, endedAt: start)
            game.rulesVersion = 0
            cases.append((game, .invalid, "rulesVersion"))
            game = scoredGame(player: ann + 100, score: 10, endedAt: start)
            cases.append((game, .notFound, "playerID"))

            for (game, code, field) in cases {
                let error = #expect(throws: StoreError.self) { try repository.record(game) }
                #expect(error?.code == code)
                #expect(error?.field == field)
            }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aPlayersGamesComeNewestFirstInPages(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("ann")
            let bob = try store.addPlayer("bob")
            let repository = store.repositories().games
            var annIDs: [Int64] = []
            for index in 0..<7 {
                annIDs.append(try repository.record(scoredGame(player: ann, score: index, endedAt: start.addingTimeInterval(Double(index)))).game.id)
                try repository.record(scoredGame(player: bob, score: index, endedAt: start))
            }
            let first = try repository.games(playerID: ann, limit: 3)
            #expect(first.map(\.id) == Array(annIDs.reversed().prefix(3)))
            let second = try repository.games(playerID: ann, limit: 3, before: first.last?.id)
            let third = try repository.games(playerID: ann, limit: 3, before: second.last?.id)
            #expect((first + second + third).map(\.id) == annIDs.reversed())
            #expect(third.count == 1)
            #expect(try repository.games(playerID: ann, limit: 3, before: third.last?.id).isEmpty)

            #expect(throws: StoreError.self) { try repository.games(playerID: ann, limit: 0) }
            let unknown = #expect(throws: StoreError.self) { try repository.games(playerID: 999) }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test(arguments: StorageBackends.all) func forEachGameVisitsEveryGameOnceInOrder(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repository = store.repositories().games
            var ids: [Int64] = []
            for index in 0..<11 {
                ids.append(try repository.record(scoredGame(player: ann, score: index, endedAt: start)).game.id)
            }
            var seen: [Int64] = []
            try repository.forEachGame(batchSize: 4) { seen.append($0.id) }
            #expect(seen == ids)
            seen = []
            try repository.forEachGame(afterID: ids[8], batchSize: 2) { seen.append($0.id) }
            #expect(seen == Array(ids[9...]))
        }
    }

    @Test(arguments: StorageBackends.all) func aRecordedGameComesBackWithEveryField(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let games = store.repositories().games
            // A seed above 2^63 comes back unchanged.
            let seed: UInt64 = 0xF00D_0000_0000_BEEF
            let (log, state) = GameFixture.play(seed: seed, level: .rapid, dodgeSteps: 60)
            #expect(state.isOver)
            let game = NewGame(
                playerID: player, level: .rapid, seed: seed, inputLog: log, score: state.score, steps: state.step,
                endReason: .crash, startedAt: start, endedAt: start.addingTimeInterval(42.9), durationMilliseconds: 41_250)
            let recorded = try games.record(game)

            let expected = GameRecord(
                id: recorded.game.id, playerID: player, level: .rapid, seed: seed, rulesVersion: GameRules.version,
                inputLog: log.encoded, score: state.score, steps: state.step, endReason: .crash, practice: false,
                startedAt: start, endedAt: start.addingTimeInterval(42), durationMilliseconds: 41_250)
            #expect(recorded.game == expected)
            #expect(try games.game(id: recorded.game.id) == expected)
            #expect(try games.games(playerID: player) == [expected])
            #expect(try games.game(id: recorded.game.id + 1) == nil)
        }
    }

    @Test(arguments: StorageBackends.all) func aLowerOrEqualScoreDoesNotReplaceTheBest(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let repository = repositories.games
            try repository.record(scoredGame(player: ann, score: 50, endedAt: start))
            let lower = try repository.record(scoredGame(player: ann, score: 30, endedAt: start.addingTimeInterval(60)))
            #expect(lower.standings.allSatisfy { $0.personalBest == 50 && !$0.isNewBest && $0.rank == 1 })
            let equal = try repository.record(scoredGame(player: ann, score: 50, endedAt: start.addingTimeInterval(120)))
            #expect(equal.standings.allSatisfy { $0.personalBest == 50 && !$0.isNewBest })
            // The best on every board is still the first game's, achieved at its time.
            let now = start.addingTimeInterval(180)
            for period in LeaderboardPeriod.allCases {
                let entries = try repositories.leaderboards.top(level: .fast, period: period, now: now).entries
                #expect(entries == [LeaderboardEntry(rank: 1, playerPublicID: "p-1", displayName: "Racer", score: 50, achievedAt: start)], "\(period)")
            }
            #expect(try repository.games(playerID: ann).count == 3)
        }
    }

    @Test(arguments: StorageBackends.all) func aBestIsKeptPerLevel(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repositories = store.repositories()
            try repositories.games.record(scoredGame(player: ann, level: .cruise, score: 80, endedAt: start))
            let rapid = try repositories.games.record(scoredGame(player: ann, level: .rapid, score: 20, endedAt: start))
            #expect(rapid.standings.allSatisfy { $0.personalBest == 20 && $0.isNewBest && $0.level == .rapid })
            // A best on the cruise and rapid boards, none on fast.
            for period in LeaderboardPeriod.allCases {
                let scores = { (level: SpeedLevel) in try repositories.leaderboards.top(level: level, period: period, now: self.start).entries.map(\.score) }
                #expect(try scores(.cruise) == [80], "\(period)")
                #expect(try scores(.rapid) == [20], "\(period)")
                #expect(try scores(.fast) == [], "\(period)")
            }
        }
    }

    @Test(arguments: StorageBackends.all) func aPracticeGameIsStoredButNeverReachesALeaderboard(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repositories = store.repositories()
            var practice = scoredGame(player: ann, score: 99, endedAt: start)
            practice.practice = true
            let recorded = try repositories.games.record(practice)
            #expect(recorded.standings.isEmpty)
            #expect(recorded.game.practice)
            #expect(try repositories.games.game(id: recorded.game.id)?.practice == true)
            // No best score on any board.
            for level in SpeedLevel.allCases {
                for period in LeaderboardPeriod.allCases {
                    let page = try repositories.leaderboards.top(level: level, period: period, now: start)
                    #expect(page.entries.isEmpty && page.total == 0, "\(level) \(period)")
                    #expect(try repositories.leaderboards.aroundMe(playerID: ann, level: level, period: period, now: start) == nil, "\(level) \(period)")
                }
            }
        }
    }

    /// `retrorapid verify`'s check on untouched games: real games, finished and abandoned,
    /// replay to their stored score and are each counted.
    @Test(arguments: StorageBackends.all) func verifyPassesRealGames(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let ann = try store.addPlayer("p-1")
            let repository = store.repositories().games
            for (index, level) in SpeedLevel.allCases.enumerated() {
                let seed = UInt64(2026 + index)
                let (log, state) = GameFixture.play(seed: seed, level: level, dodgeSteps: 80 + 40 * index)
                try repository.record(NewGame(playerID: ann, level: level, seed: seed, inputLog: log, score: state.score,
                                              steps: state.step, endReason: .crash, startedAt: start, endedAt: start.addingTimeInterval(90),
                                              durationMilliseconds: 90_000))
            }
            let (log, state) = GameFixture.play(seed: 7, level: .fast, dodgeSteps: 50, crash: false)
            #expect(!state.isOver)
            try repository.record(NewGame(
                playerID: ann, level: .fast, seed: 7, inputLog: log, score: state.score, steps: state.step,
                endReason: .abandoned, startedAt: start, endedAt: start.addingTimeInterval(40), durationMilliseconds: 30_000))
            #expect(try repository.games(playerID: ann).allSatisfy { $0.score != 0 })

            var counted = 0
            var visited: [Int64] = []
            #expect(try repository.verifyAll(progress: { counted = $0 }, visiting: { visited.append($0.id) }).isEmpty)
            #expect(counted == 4)
            #expect(visited == (try repository.games(playerID: ann).map(\.id).reversed()))
        }
    }
}
