import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `QuotaRepository`, run against every backend in `StorageBackends.all`.
@Suite struct QuotaRepositoryContractTests {
    @Test(arguments: StorageBackends.all) func resetTimeIsTheNextUTCMidnightAcrossMonthsYearsAndLeapDays(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let quota = store.repositories().quota
            let cases = [
                ("2026-12-31T23:59:59Z", "2026-12-31", "2027-01-01T00:00:00Z"),
                ("2028-02-28T12:00:00Z", "2028-02-28", "2028-02-29T00:00:00Z"),
                ("2028-02-29T00:00:00Z", "2028-02-29", "2028-03-01T00:00:00Z"),
                ("2026-02-28T23:59:59Z", "2026-02-28", "2026-03-01T00:00:00Z"),
                ("1969-12-31T23:00:00Z", "1969-12-31", "1970-01-01T00:00:00Z"),
            ]
            for (now, day, reset) in cases {
                let status = try quota.status(playerID: player, now: utc(now))
                #expect(status.day == day, "at \(now)")
                #expect(status.resetsAt == utc(reset), "at \(now)")
            }
        }
    }

    @Test(arguments: StorageBackends.all) func sixthPlayIsRefusedWithTheResetTimeAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let quota = store.repositories().quota
            for _ in 1...5 { try quota.consumePlay(playerID: player, now: utc("2026-01-15T09:00:00Z")) }

            let before = try store.dump()
            let refusal = #expect(throws: QuotaExhaustedError.self) {
                try quota.consumePlay(playerID: player, gameID: "g6", now: utc("2026-01-15T20:48:00Z"))
            }
            #expect(refusal?.status.playsLeft == 0)
            #expect(refusal?.status.playsUsed == 5)
            #expect(refusal?.status.resetsAt == utc("2026-01-16T00:00:00Z"))
            #expect(refusal?.storeError.code == .forbidden)
            #expect(refusal?.storeError.message.hasPrefix("No free plays left today; they reset at 00:00 UTC (in 3 h 12 min). Unlimited play:") == true)
            #expect(try store.dump() == before)

            // A second before midnight the wait rounds up to a minute, never "0 min".
            let late = #expect(throws: QuotaExhaustedError.self) {
                try quota.consumePlay(playerID: player, now: utc("2026-01-15T23:59:59Z"))
            }
            #expect(late?.storeError.message.contains("(in 1 min)") == true)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func unknownPlayersAndEmptyGameIDsAreRefused(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let quota = store.repositories().quota
            let now = utc("2026-01-15T09:00:00Z")
            let before = try store.dump()
            let unknown = #expect(throws: StoreError.self) { try quota.consumePlay(playerID: player + 1, now: now) }
            #expect(unknown?.code == .notFound)
            #expect((#expect(throws: StoreError.self) { try quota.status(playerID: player + 1, now: now) })?.code == .notFound)
            let empty = #expect(throws: StoreError.self) { try quota.consumePlay(playerID: player, gameID: "", now: now) }
            #expect(empty?.code == .invalid)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func playsCountDownAndResetAtUTCMidnight(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let quota = store.repositories().quota

            let fresh = try quota.status(playerID: player, now: utc("2026-01-15T10:00:00Z"))
            #expect(fresh.day == "2026-01-15")
            #expect(fresh.playsUsed == 0 && fresh.playsLeft == 5 && fresh.dailyFreePlays == 5)
            #expect(!fresh.unlimited && fresh.canPlay)
            #expect(fresh.resetsAt == utc("2026-01-16T00:00:00Z"))

            let times = ["2026-01-15T00:00:00Z", "2026-01-15T08:00:00Z", "2026-01-15T12:30:00Z", "2026-01-15T20:00:00Z", "2026-01-15T23:59:59Z"]
            for (index, time) in times.enumerated() {
                let status = try quota.consumePlay(playerID: player, now: utc(time))
                #expect(status.playsUsed == index + 1)
                #expect(status.playsLeft == 4 - index)
                #expect(status.resetsAt == utc("2026-01-16T00:00:00Z"))
            }
            let spent = try quota.status(playerID: player, now: utc("2026-01-15T23:59:59Z"))
            #expect(spent.playsLeft == 0 && !spent.canPlay)

            // The first second of the next UTC day: a full quota again.
            let midnight = utc("2026-01-16T00:00:00Z")
            let reset = try quota.status(playerID: player, now: midnight)
            #expect(reset.day == "2026-01-16" && reset.playsUsed == 0 && reset.playsLeft == 5)
            #expect(reset.resetsAt == utc("2026-01-17T00:00:00Z"))
            #expect(try quota.consumePlay(playerID: player, now: midnight).playsLeft == 4)
            // Six plays kept in all: five on the first day, one on the second.
            #expect(try quota.status(playerID: player, now: utc("2026-01-15T12:00:00Z")).playsUsed == 5)
            #expect(try quota.status(playerID: player, now: midnight).playsUsed == 1)
        }
    }

    @Test(arguments: StorageBackends.all) func theDailyAllowanceIsConfigurable(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let now = utc("2026-01-15T09:00:00Z")

            let two = store.repositories(RepositorySettings(dailyFreePlays: 2)).quota
            #expect(two.dailyFreePlays == 2)
            #expect(try two.consumePlay(playerID: player, now: now).playsLeft == 1)
            #expect(try two.consumePlay(playerID: player, now: now).playsLeft == 0)
            #expect(throws: QuotaExhaustedError.self) { try two.consumePlay(playerID: player, now: now) }

            let other = try store.addPlayer("p2")
            let none = store.repositories(RepositorySettings(dailyFreePlays: 0)).quota
            #expect(try none.status(playerID: other, now: now).canPlay == false)
            let before = try store.dump()
            #expect(throws: QuotaExhaustedError.self) { try none.consumePlay(playerID: other, now: now) }
            // The refusal recorded no play.
            #expect(try store.dump() == before)
            #expect(try none.status(playerID: other, now: now).playsUsed == 0)
        }
    }

    @Test(arguments: StorageBackends.all) func unlimitedPlayersConsumeNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let repositories = store.repositories()
            let quota = repositories.quota
            let now = utc("2026-01-15T09:00:00Z")
            for _ in 1...5 { try quota.consumePlay(playerID: player, now: now) }
            #expect(throws: QuotaExhaustedError.self) { try quota.consumePlay(playerID: player, now: now) }

            try repositories.entitlements.grantUnlimited(playerID: player, source: .operator, reference: "tester", now: now)
            let before = try store.dump()
            for _ in 1...20 {
                let status = try quota.consumePlay(playerID: player, now: now)
                #expect(status.unlimited && status.canPlay)
                #expect(status.playsUsed == 5)
            }
            // Twenty unlimited plays recorded nothing: still the five free plays.
            #expect(try store.dump() == before)
            #expect(try quota.status(playerID: player, now: now).unlimited)
            #expect(try quota.status(playerID: player, now: now).playsUsed == 5)
        }
    }

    @Test(arguments: StorageBackends.all) func aResumedGameConsumesNoSecondPlayEvenAfterMidnight(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p1")
            let quota = store.repositories().quota
            #expect(try quota.consumePlay(playerID: player, gameID: "g1", now: utc("2026-01-15T23:59:00Z")).playsUsed == 1)
            #expect(try quota.consumePlay(playerID: player, gameID: "g1", now: utc("2026-01-15T23:59:30Z")).playsUsed == 1)
            #expect(try quota.consumePlay(playerID: player, gameID: "g1", now: utc("2026-01-16T00:00:10Z")).playsUsed == 0)
            #expect(try quota.consumePlay(playerID: player, gameID: "g2", now: utc("2026-01-16T00:00:20Z")).playsUsed == 1)
            // Two plays kept in all, one on each day.
            #expect(try quota.status(playerID: player, now: utc("2026-01-15T12:00:00Z")).playsUsed == 1)
            #expect(try quota.status(playerID: player, now: utc("2026-01-16T12:00:00Z")).playsUsed == 1)
        }
    }

    /// Two devices of one player, each with its own connection on its own thread, start a game
    /// at the same moment with one free play left: exactly one gets it, every time.
    @Test(arguments: StorageBackends.all) func twoDevicesRacingForTheLastPlayExactlyOneWins(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let quota = store.repositories().quota
            let now = utc("2026-01-15T18:00:00Z")
            for round in 1...40 {
                let player = try store.addPlayer("racer\(round)")
                for _ in 1...4 { try quota.consumePlay(playerID: player, now: now) }

                let outcomes = raceConnections(store, 2) { index, repositories -> String in
                    do {
                        let status = try repositories.quota.consumePlay(playerID: player, gameID: "game-\(round)-\(index + 1)", now: now)
                        return status.playsLeft == 0 ? "won" : "won with \(status.playsLeft) left"
                    } catch let error as QuotaExhaustedError {
                        return error.status.playsLeft == 0 ? "refused" : "refused with \(error.status.playsLeft) left"
                    }
                }

                #expect(try outcomes.map { try $0.get() }.sorted() == ["refused", "won"], "round \(round)")
                #expect(try quota.status(playerID: player, now: now).playsUsed == 5, "round \(round)")
            }
        }
    }
}
