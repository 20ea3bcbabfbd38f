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
}
