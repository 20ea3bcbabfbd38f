import Foundation
import RetroRapidDomain
import RetroRapidRules
import RetroRapidStorageFixtures
import Testing

/// The contract of `DailyRoadRepository` and of the daily road in `RunningGameRepository.begin`
/// and `GameRepository.record`, run against every backend in `StorageBackends.all`.
@Suite(.serialized) struct DailyRoadRepositoryContractTests {
    let now = utc("2026-12-01T10:00:00Z")
    var today: UTCDay { UTCDay(containing: now) }

    func dailyStart(_ id: String, player: Int64, seed: UInt64, practice: Bool = false, level: SpeedLevel = .fast,
                    at: Date? = nil) -> RunningGameStart {
        RunningGameStart(publicID: id, playerID: player, level: level, seed: seed, practice: practice, startedAt: at ?? now,
                         road: .daily(UTCDay(containing: at ?? now)))
    }

    /// A finished daily game of `player` with this score, ended `offset` seconds after `now`.
    func dailyGame(_ id: String, player: Int64, seed: UInt64, score: Int, offset: TimeInterval = 60, practice: Bool = false) -> NewGame {
        let steps = score + 6
        return NewGame(publicID: id, playerID: player, level: .fast, seed: seed, inputLog: InputLog(steps: steps, moves: []),
                       score: score, steps: steps, endReason: .crash, practice: practice, startedAt: now,
                       endedAt: now.addingTimeInterval(offset), durationMilliseconds: 30_000, road: .daily(today))
    }

    @Test(arguments: StorageBackends.all) func aDaysSeedIsMadeOnFirstAskAndKept(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let roads = store.repositories().dailyRoads
            #expect(try roads.storedSeed(level: .fast, day: today) == nil)
            let seed = try roads.seed(level: .fast, day: today, now: now)
            #expect(try roads.seed(level: .fast, day: today, now: now.addingTimeInterval(3600)) == seed)
            #expect(try roads.storedSeed(level: .fast, day: today) == seed)
            // Each level and each day has its own road.
            let rapid = try roads.seed(level: .rapid, day: today, now: now)
            let yesterday = try roads.seed(level: .fast, day: UTCDay("2026-11-30")!, now: now)
            #expect(Set([seed, rapid, yesterday]).count == 3)
            // Tomorrow's road is not given out, and asking makes nothing.
            let before = try store.dump()
            #expect(throws: StoreError(.invalid, "must be today (2026-12-01) or an earlier day, got 2026-12-02", field: "day")) {
                try roads.seed(level: .fast, day: UTCDay("2026-12-02")!, now: now)
            }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aHundredConcurrentFirstAsksForTodaysSeedGetOneSeed(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let (now, today) = (self.now, self.today)
            let outcomes = raceConnections(store, 100) { _, repositories in
                try repositories.dailyRoads.seed(level: .rapid, day: today, now: now)
            }
            let seeds = try outcomes.map { try $0.get() }
            #expect(seeds.count == 100)
            #expect(Set(seeds).count == 1)
            #expect(try store.repositories().dailyRoads.storedSeed(level: .rapid, day: today) == seeds.first)
        }
    }

    @Test(arguments: StorageBackends.all) func oneScoredAttemptPerDayAndLevelPracticeIsFree(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let seed = try repositories.dailyRoads.seed(level: .fast, day: today, now: now)
            let quota = try repositories.runningGames.begin(dailyStart("00000000000000d1", player: player, seed: seed))
            #expect(quota?.playsUsed == 1)
            #expect(try repositories.runningGames.running(publicID: "00000000000000d1")?.road == .daily(today))
            #expect(try repositories.dailyRoads.attempt(playerID: player, level: .fast, day: today)
                    == DailyAttempt(gameID: "00000000000000d1", startedAt: now, score: nil, rank: nil))

            // A second scored start the same day is refused, consuming nothing.
            let before = try store.dump()
            do {
                try repositories.runningGames.begin(dailyStart("00000000000000d2", player: player, seed: seed, at: now.addingTimeInterval(600)))
                Issue.record("a second scored daily start was accepted")
            } catch let error as DailyRoadPlayedError {
                #expect(error.gameID == "00000000000000d1" && error.day == today && error.level == .fast)
                #expect(error.resetsAt == utc("2026-12-02T00:00:00Z"))
                #expect(error.storeError.code == .conflict && error.storeError.field == "road")
            }
            #expect(try store.dump() == before)
            #expect(try repositories.quota.status(playerID: player, now: now).playsUsed == 1)

            // Practice on it is free and unlimited; another level has its own attempt.
            #expect(try repositories.runningGames.begin(dailyStart("00000000000000d3", player: player, seed: seed, practice: true)) == nil)
            #expect(try repositories.runningGames.begin(dailyStart("00000000000000d4", player: player, seed: seed, practice: true)) == nil)
            let rapidSeed = try repositories.dailyRoads.seed(level: .rapid, day: today, now: now)
            try repositories.runningGames.begin(dailyStart("00000000000000d5", player: player, seed: rapidSeed, level: .rapid))

            // A start that never ran (cancelled) was no attempt: the next one is taken.
            #expect(try repositories.runningGames.cancel(publicID: "00000000000000d1"))
            #expect(try repositories.dailyRoads.attempt(playerID: player, level: .fast, day: today) == nil)
            try repositories.runningGames.begin(dailyStart("00000000000000d6", player: player, seed: seed))
            #expect(try repositories.dailyRoads.attempt(playerID: player, level: .fast, day: today)?.gameID == "00000000000000d6")
        }
    }

    @Test(arguments: StorageBackends.all) func aDailyStartMustUseTheDaysRoad(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let before = try store.dump()
            // No road made yet for the day, then the wrong seed: refused, nothing consumed.
            #expect(throws: StoreError(.invalid, "is not the seed of the fast daily road of 2026-12-01", field: "seed")) {
                try repositories.runningGames.begin(dailyStart("00000000000000d1", player: player, seed: 5))
            }
            let seed = try repositories.dailyRoads.seed(level: .fast, day: today, now: now)
            let withRoad = try store.dump()
            #expect(throws: StoreError.self) {
                try repositories.runningGames.begin(dailyStart("00000000000000d1", player: player, seed: seed &+ 1))
            }
            #expect(try store.dump() == withRoad)
            // The day is the day the game starts.
            #expect(throws: StoreError.self) {
                try repositories.runningGames.begin(RunningGameStart(publicID: "00000000000000d1", playerID: player, level: .fast, seed: seed,
                                                                     practice: false, startedAt: now, road: .daily(UTCDay("2026-11-30")!)))
            }
            // A ghost race is practice only.
            #expect(throws: StoreError.self) {
                try repositories.runningGames.begin(RunningGameStart(publicID: "00000000000000d1", playerID: player, level: .fast, seed: seed,
                                                                     practice: false, startedAt: now, road: .ghost))
            }
            #expect(try store.dump() == withRoad)
            #expect(before != withRoad)
        }
    }

    @Test(arguments: StorageBackends.all) func twoConcurrentScoredDailyStartsGiveOne(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let seed = try store.repositories().dailyRoads.seed(level: .fast, day: today, now: now)
            let starts = [dailyStart("00000000000000e1", player: player, seed: seed), dailyStart("00000000000000e2", player: player, seed: seed)]
            for _ in 0..<10 {
                let outcomes = raceConnections(store, 2) { index, repositories in
                    try repositories.runningGames.begin(starts[index])
                }
                let won = outcomes.filter { (try? $0.get()) != nil }
                let refused = outcomes.filter { if case .failure(let error) = $0 { error is DailyRoadPlayedError } else { false } }
                #expect(won.count == 1 && refused.count == 1, "\(outcomes)")
                let repositories = store.repositories()
                #expect(try repositories.runningGames.running(playerID: player).count == 1)
                #expect(try repositories.quota.status(playerID: player, now: now).playsUsed == 1)
                // Cancelled, for the next round: the play and the attempt go back.
                let winner = try #require(try repositories.dailyRoads.attempt(playerID: player, level: .fast, day: today))
                #expect(try repositories.runningGames.cancel(publicID: winner.gameID))
                #expect(try repositories.quota.status(playerID: player, now: now).playsUsed == 0)
            }
        }
    }

    @Test(arguments: StorageBackends.all) func scoredDailyGamesMakeTheDaysBoard(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let ann = try addRacer(repositories.players, "Ann").id
            let bo = try addRacer(repositories.players, "Bo").id
            let cy = try addRacer(repositories.players, "Cy").id
            let seed = try repositories.dailyRoads.seed(level: .fast, day: today, now: now)
            for (id, player) in [("00000000000000a1", ann), ("00000000000000b1", bo), ("00000000000000c1", cy)] {
                try repositories.runningGames.begin(dailyStart(id, player: player, seed: seed))
            }
            let first = try repositories.games.record(dailyGame("00000000000000a1", player: ann, seed: seed, score: 30))
            #expect(first.daily == DailyStanding(day: today, best: 30, rank: 1))
            #expect(first.game.road == .daily(today))
            let second = try repositories.games.record(dailyGame("00000000000000b1", player: bo, seed: seed, score: 50))
            #expect(second.daily == DailyStanding(day: today, best: 50, rank: 1))
            try repositories.games.record(dailyGame("00000000000000c1", player: cy, seed: seed, score: 10))
            // Practice on the road is stored, on no board.
            let practice = try repositories.games.record(dailyGame("00000000000000a2", player: ann, seed: seed, score: 99, practice: true))
            #expect(practice.daily == nil && practice.standings.isEmpty)

            let later = now.addingTimeInterval(3600)
            let page = try repositories.dailyRoads.top(level: .fast, day: today, limit: 2, now: later)
            #expect(page.day == today && page.periodKey == "2026-12-01" && page.total == 3)
            #expect(page.resetsAt == utc("2026-12-02T00:00:00Z"))
            #expect(page.entries.map(\.displayName) == ["Racer Bo", "Racer Ann"])
            #expect(page.entries.map(\.gameID) == ["00000000000000b1", "00000000000000a1"])
            #expect(page.entries.map(\.rank) == [1, 2])
            let next = try repositories.dailyRoads.top(level: .fast, day: today, limit: 2, after: page.nextCursor, now: later)
            #expect(next.entries.map(\.displayName) == ["Racer Cy"] && next.entries.first?.rank == 3 && next.nextCursor == nil)
            // A daily cursor is for its own board only, and a day board's for its own.
            #expect(throws: StoreError.self) { try repositories.leaderboards.top(level: .fast, period: .today, after: page.nextCursor, now: later) }
            let dayBoard = try repositories.leaderboards.top(level: .fast, period: .today, limit: 1, now: later)
            #expect(throws: StoreError.self) { try repositories.dailyRoads.top(level: .fast, day: today, after: dayBoard.nextCursor, now: later) }
            // The games count on the usual boards too, with their ids (the practice one does not).
            #expect(dayBoard.total == 3 && dayBoard.entries.first?.gameID == "00000000000000b1")

            let around = try #require(try repositories.dailyRoads.aroundMe(playerID: cy, level: .fast, day: today, neighbours: 1, now: later))
            #expect(around.me.rank == 3 && around.entries.map(\.displayName) == ["Racer Ann", "Racer Cy"] && around.day == today)
            #expect(around.entries.map(\.gameID) == ["00000000000000a1", "00000000000000c1"])
            #expect(try repositories.dailyRoads.attempt(playerID: ann, level: .fast, day: today)
                    == DailyAttempt(gameID: "00000000000000a1", startedAt: now, score: 30, rank: 2))

            // Tomorrow, today's board is a past day's, over; the new day's is empty.
            let tomorrow = utc("2026-12-02T08:00:00Z")
            #expect(try repositories.dailyRoads.top(level: .fast, day: today, now: tomorrow).entries.count == 3)
            #expect(try repositories.dailyRoads.top(level: .fast, day: UTCDay(containing: tomorrow), now: tomorrow).total == 0)
            #expect(try repositories.dailyRoads.aroundMe(playerID: ann, level: .fast, day: UTCDay(containing: tomorrow), now: tomorrow) == nil)
            #expect(throws: StoreError.self) { try repositories.dailyRoads.top(level: .fast, day: UTCDay("2026-12-03")!, now: tomorrow) }
        }
    }

    @Test(arguments: StorageBackends.all) func aSecondScoredDailyGameIsNeverStored(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let games = store.repositories().games
            try games.record(dailyGame("00000000000000a1", player: player, seed: 1, score: 30))
            let before = try store.dump()
            #expect(throws: DailyRoadPlayedError.self) {
                try games.record(dailyGame("00000000000000a2", player: player, seed: 1, score: 40))
            }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aRecoveredDailyGameKeepsItsRoadAndAttempt(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let seed = try repositories.dailyRoads.seed(level: .fast, day: today, now: now)
            try repositories.runningGames.begin(dailyStart("00000000000000d1", player: player, seed: seed))
            let recovered = try repositories.runningGames.recoverAll(now: now.addingTimeInterval(60))
            #expect(recovered.map(\.recorded.game.road) == [.daily(today)])
            #expect(recovered.first?.recorded.daily?.day == today)
            #expect(try repositories.games.game(publicID: "00000000000000d1")?.road == .daily(today))
            #expect(throws: DailyRoadPlayedError.self) {
                try repositories.runningGames.begin(dailyStart("00000000000000d2", player: player, seed: seed))
            }
        }
    }

    @Test(arguments: StorageBackends.all) func gamesKeepTheirRoad(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let games = store.repositories().games
            var ghost = scoredGame(player: player, score: 5, endedAt: now)
            ghost.publicID = "00000000000000g1"
            ghost.road = .ghost
            ghost.practice = true
            #expect(try games.record(ghost).game.road == .ghost)
            #expect(try games.game(publicID: "00000000000000g1")?.road == .ghost)
            #expect(try games.games(playerID: player).map(\.road) == [.ghost])
            ghost.publicID = "00000000000000g2"
            ghost.practice = false
            #expect(throws: StoreError.self) { try games.record(ghost) }
        }
    }
}
