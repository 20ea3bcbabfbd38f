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
        try repository.begin(RunningGameStart(publicID: id, playerID: player, level: level, seed: seed, practice: practice,
                                              startedAt: at ?? start))
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
}
