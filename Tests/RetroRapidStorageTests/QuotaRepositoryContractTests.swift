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
}
