import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import RetroRapidRules
import Testing

/// The contract of `LeaderboardRepository`, run against every backend in `StorageBackends.all`.
@Suite struct LeaderboardRepositoryContractTests {
    @Test(arguments: StorageBackends.all) func resetsAtIsTheNextUTCMidnightAndTheNextMonday(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let boards = store.repositories().leaderboards
            let wednesday = utc("2026-01-14T15:30:00Z")
            #expect(boards.resetsAt(period: .today, now: wednesday) == utc("2026-01-15T00:00:00Z"))
            #expect(boards.resetsAt(period: .thisWeek, now: wednesday) == utc("2026-01-19T00:00:00Z"))
            #expect(boards.resetsAt(period: .allTime, now: wednesday) == nil)
            // At the very moment of a reset, the next one is a whole period away.
            let mondayMidnight = utc("2026-01-19T00:00:00Z")
            #expect(boards.resetsAt(period: .today, now: mondayMidnight) == utc("2026-01-20T00:00:00Z"))
            #expect(boards.resetsAt(period: .thisWeek, now: mondayMidnight) == utc("2026-01-26T00:00:00Z"))
            let sundayNight = utc("2026-01-25T23:59:59Z").addingTimeInterval(0.999)
            #expect(boards.resetsAt(period: .today, now: sundayNight) == mondayMidnight.addingTimeInterval(7 * 86_400))
            #expect(boards.resetsAt(period: .thisWeek, now: sundayNight) == utc("2026-01-26T00:00:00Z"))
            // Across a year end and a leap day.
            #expect(boards.resetsAt(period: .today, now: utc("2026-12-31T12:00:00Z")) == utc("2027-01-01T00:00:00Z"))
            #expect(boards.resetsAt(period: .today, now: utc("2028-02-28T12:00:00Z")) == utc("2028-02-29T00:00:00Z"))
            #expect(boards.resetsAt(period: .thisWeek, now: utc("2026-12-31T12:00:00Z")) == utc("2027-01-04T00:00:00Z"))
            // The page carries it too.
            let page = try boards.top(level: .cruise, period: .today, now: wednesday)
            #expect(page.resetsAt == utc("2026-01-15T00:00:00Z"))
        }
    }
}
