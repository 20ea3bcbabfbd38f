import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// LeaderboardPeriod: a value, tested without any storage.
@Suite struct LeaderboardPeriodTests {
    @Test func periodKeysMatchFoundationsISOCalendar() {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var random = SystemRandomNumberGenerator()
        // Known edges: ISO week-years differ from calendar years around New Year.
        let edges = ["2027-01-01T00:00:00Z": "2026-W53", "2026-01-01T00:00:00Z": "2026-W01",
                     "2024-12-30T00:00:00Z": "2025-W01", "2021-01-03T23:59:59Z": "2020-W53"]
        for (text, key) in edges {
            #expect(LeaderboardPeriod.thisWeek.key(containing: utc(text)) == key)
        }
        for _ in 0..<5000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800, using: &random)))
            let parts = calendar.dateComponents([.year, .month, .day, .yearForWeekOfYear, .weekOfYear, .weekday], from: date)
            let week = String(format: "%04d-W%02d", parts.yearForWeekOfYear!, parts.weekOfYear!)
            let day = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(LeaderboardPeriod.thisWeek.key(containing: date) == week)
            #expect(LeaderboardPeriod.today.key(containing: date) == day)
            let weekStart = calendar.dateInterval(of: .weekOfYear, for: date)!
            #expect(LeaderboardPeriod.thisWeek.start(containing: date) == weekStart.start)
            #expect(LeaderboardPeriod.thisWeek.resetsAt(now: date) == weekStart.end)
            #expect(LeaderboardPeriod.today.resetsAt(now: date) == calendar.dateInterval(of: .day, for: date)!.end)
        }
    }
}
