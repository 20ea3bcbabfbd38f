import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidRules
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// Running games under real concurrency (SQLRunningGameRepository on PostgreSQL): starts racing for
/// the last play, cancels racing to give one back, and a checkpoint of many games in one
/// statement. The rules are in Tests/RetroRapidStorageTests/RunningGameRepositoryContractTests.swift.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresRunningGameRaceTests {
    let start = utc("2026-01-15T10:00:00Z")

    static func gameID(_ index: Int) -> String { String(format: "%016x", 0xA000 + index) }

    @Test func exactlyOneOfAHundredStartsGetsTheLastPlay() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacePlayer(connection, "p-1")
            try SQLQuotaRepository(executor: connection, dailyFreePlays: 3).consumePlay(playerID: player, now: start)
            try SQLQuotaRepository(executor: connection, dailyFreePlays: 3).consumePlay(playerID: player, now: start)
            let start = self.start
            let outcomes = raceOnConnections(100, url: url) { index, db in
                try SQLRunningGameRepository(postgres: db, dailyFreePlays: 3).begin(RunningGameStart(
                    publicID: Self.gameID(index), playerID: player, level: .fast, seed: UInt64(index), practice: false, startedAt: start))
            }
            let (won, refused, other) = tally(outcomes, refusedWith: QuotaExhaustedError.self)
            #expect(other.isEmpty, "\(other)")
            #expect(won == 1 && refused == 99)
            let winner = try #require(outcomes.firstIndex { (try? $0.get()) != nil })
            // One game runs, and it holds the one play it took: the refused left nothing behind.
            let running = SQLRunningGameRepository(postgres: connection, dailyFreePlays: 3)
            #expect(try running.running().map(\.publicID) == [Self.gameID(winner)])
            #expect(try running.running().first?.freePlay == true)
            #expect(try connection.execute("SELECT count(*) FROM plays WHERE player_id = $1", [player]).first?.int(at: 0) == 3)
            #expect(try connection.execute("SELECT game_id FROM plays WHERE game_id IS NOT NULL").map { $0.string(at: 0) } == [Self.gameID(winner)])
        }
    }

    @Test func aHundredCancelsOfOneGameGiveItsPlayBackOnce() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacePlayer(connection, "p-1")
            let repository = SQLRunningGameRepository(postgres: connection, dailyFreePlays: 5)
            for index in 0..<2 {
                try repository.begin(RunningGameStart(publicID: Self.gameID(index), playerID: player, level: .fast, seed: 1,
                                                      practice: false, startedAt: start))
            }
            let outcomes = raceOnConnections(100, url: url) { _, db in
                try SQLRunningGameRepository(postgres: db, dailyFreePlays: 5).cancel(publicID: Self.gameID(0))
            }
            #expect(outcomes.filter { (try? $0.get()) == true }.count == 1)
            #expect(outcomes.filter { (try? $0.get()) == false }.count == 99)
            // The other game and its play stay.
            #expect(try repository.running().map(\.publicID) == [Self.gameID(1)])
            #expect(try connection.execute("SELECT game_id FROM plays").map { $0.string(at: 0) } == [Self.gameID(1)])
        }
    }

    @Test func recoveriesOfOnePlayersGamesAtOnceGiveBackOnePlay() throws {
        // Ten rounds: the two recoveries (two nodes' sweeps, say) must meet in every order.
        for round in 0..<10 {
            try withRaceDatabase { url, connection in
                let player = try addRacePlayer(connection, "p-1")
                let repository = SQLRunningGameRepository(postgres: connection, dailyFreePlays: 5)
                for index in 0..<2 {
                    try repository.begin(RunningGameStart(publicID: Self.gameID(index), playerID: player, level: .fast, seed: 7,
                                                          practice: false, startedAt: start.addingTimeInterval(Double(index))))
                }
                let now = start.addingTimeInterval(60)
                let outcomes = raceOnConnections(2, url: url) { index, db in
                    try SQLRunningGameRepository(postgres: db, dailyFreePlays: 5).recover(publicID: Self.gameID(index), now: now)
                }
                let refunds = outcomes.compactMap { try? $0.get()?.recorded.game.playRefunded }
                #expect(refunds.count == 2 && refunds.filter { $0 }.count == 1, "round \(round): \(outcomes)")
                #expect(try connection.execute("SELECT count(*) FROM plays WHERE player_id = $1", [player]).first?.int(at: 0) == 1)
            }
        }
    }

    @Test func aCheckpointOfThousandsOfGamesIsOneBatchAndCompacts() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let repository = SQLRunningGameRepository(postgres: connection)
            let count = 3000
            for index in 0..<count {
                try repository.begin(RunningGameStart(publicID: Self.gameID(index), playerID: player, level: .fast, seed: UInt64(index),
                                                      practice: true, startedAt: start))
            }
            // Moves hold commas and each game a log of its own: every element must land in its row.
            func moves(_ index: Int) -> [InputLog.Entry] {
                (0..<(index % 4)).map { InputLog.Entry(afterStep: $0 * 2 + 1, direction: ($0 + index) % 2 == 0 ? .left : .right) }
            }
            try repository.checkpoint((0..<count).map { index in
                GameCheckpoint(publicID: Self.gameID(index), steps: 8, movesBefore: 0, moves: moves(index), durationMilliseconds: index)
            }, now: start.addingTimeInterval(5))
            try repository.checkpoint((0..<count).map { index in
                GameCheckpoint(publicID: Self.gameID(index), steps: 9, movesBefore: moves(index).count,
                               moves: [.init(afterStep: 9, direction: .left)], durationMilliseconds: index + 1)
            }, now: start.addingTimeInterval(10))
            #expect(try connection.execute("SELECT count(*) FROM game_checkpoints").first?.int(at: 0) == 2 * count)
            let expected = (0..<count).map { InputLog(steps: 9, moves: moves($0) + [.init(afterStep: 9, direction: .left)]).encoded }
            #expect(try repository.running().map(\.inputLog) == expected)

            // A compacting batch of full logs of all but the last game: their older rows go, the
            // last game keeps both of its rows, and every log reads the same as before.
            try repository.checkpoint(try (0..<(count - 1)).map { index in
                GameCheckpoint(publicID: Self.gameID(index), log: try InputLog(encoded: expected[index]), durationMilliseconds: index + 2)
            }, compacting: true, now: start.addingTimeInterval(15))
            #expect(try connection.execute("SELECT count(*) FROM game_checkpoints").first?.int(at: 0) == count + 1)
            #expect(try repository.running().map(\.inputLog) == expected)
            #expect(try repository.running().map(\.durationMilliseconds) == (0..<count).map { $0 == count - 1 ? $0 + 1 : $0 + 2 })
        }
    }
}
