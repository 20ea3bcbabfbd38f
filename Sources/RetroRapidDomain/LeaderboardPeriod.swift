import Foundation

/// The three leaderboards each speed level has: today, this week and all time (docs/API.md).
///
/// Periods are UTC: a day starts at 00:00 UTC, a week at Monday 00:00 UTC (ISO 8601 weeks).
/// A score belongs to the periods containing the moment its game ended, so a game started at
/// 23:58 and ended at 00:03 counts for the new day. All arithmetic is on whole UTC seconds with
/// integers: no `Calendar`, no time zone database, the same answer on every machine.
public enum LeaderboardPeriod: String, CaseIterable, Sendable, Codable {
    /// The current UTC day.
    case today
    /// The current ISO week, Monday 00:00 UTC to the next Monday.
    case thisWeek
    /// Every score ever; never resets.
    case allTime

    /// The name stored in `best_scores.period`.
    package var storageName: String {
        switch self {
        case .today: "day"
        case .thisWeek: "week"
        case .allTime: "all"
        }
    }

    init?(storageName: String) {
        guard let period = Self.allCases.first(where: { $0.storageName == storageName }) else { return nil }
        self = period
    }

    /// The key of the period containing `date`: `2026-01-15` for a day, the ISO week
    /// `2026-W03` for a week (its year is the ISO week-year, so 2027-01-01 is in `2026-W53`),
    /// `all` for all time.
    public func key(containing date: Date) -> String {
        let seconds = UTCCivilTime.seconds(date)
        switch self {
        case .today:
            return UTCCivilTime.day(date)
        case .thisWeek:
            let monday = UTCCivilTime.mondayDays(containingSeconds: seconds)
            // The ISO week-year is the year of the week's Thursday; week 1 holds its first Thursday.
            let thursday = UTCCivilTime.civil(fromDays: monday + 3)
            let firstOfYear = UTCCivilTime.days(fromCivil: (thursday.year, 1, 1))
            let week = (monday + 3 - firstOfYear) / 7 + 1
            return "\(UTCCivilTime.pad(thursday.year, 4))-W\(UTCCivilTime.pad(week, 2))"
        case .allTime:
            return "all"
        }
    }

    /// When the period containing `date` began: 00:00 UTC of its day, Monday 00:00 UTC of its
    /// week; nil for all time.
    public func start(containing date: Date) -> Date? {
        let seconds = UTCCivilTime.seconds(date)
        switch self {
        case .today: return UTCCivilTime.date(seconds: UTCCivilTime.floorDiv(seconds, 86_400) * 86_400)
        case .thisWeek: return UTCCivilTime.date(seconds: UTCCivilTime.mondayDays(containingSeconds: seconds) * 86_400)
        case .allTime: return nil
        }
    }

    /// When the period containing `now` ends and a fresh board begins: the next 00:00 UTC, the
    /// next Monday 00:00 UTC, or nil for all time. Always strictly after `now`.
    public func resetsAt(now: Date) -> Date? {
        let seconds = UTCCivilTime.seconds(now)
        switch self {
        case .today: return UTCCivilTime.nextMidnight(after: now)
        case .thisWeek: return UTCCivilTime.date(seconds: (UTCCivilTime.mondayDays(containingSeconds: seconds) + 7) * 86_400)
        case .allTime: return nil
        }
    }
}
