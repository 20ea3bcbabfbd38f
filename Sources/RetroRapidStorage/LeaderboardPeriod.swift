import Foundation

/// The three leaderboards each speed level has: today, this week and all time (DESIGN §4).
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
    var storageName: String {
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
            let day = UTCCivilTime.civil(fromDays: UTCCivilTime.floorDiv(seconds, 86_400))
            return UTCCivilTime.dateText(day)
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
        case .today: return UTCCivilTime.date(seconds: (UTCCivilTime.floorDiv(seconds, 86_400) + 1) * 86_400)
        case .thisWeek: return UTCCivilTime.date(seconds: (UTCCivilTime.mondayDays(containingSeconds: seconds) + 7) * 86_400)
        case .allTime: return nil
        }
    }
}

/// UTC timestamps as the storage tables keep them: ISO-8601 text to the second,
/// `2026-01-15T10:23:45Z`, one fixed width so that text order is time order. Dates are
/// floored to the second (not rounded), so a time and the period key derived from it always
/// agree. Pure integer arithmetic (Howard Hinnant's civil-date algorithms), safe on any thread.
enum UTCCivilTime {
    /// Whole seconds since 1970-01-01T00:00:00Z, floored.
    static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    static func date(seconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `date` as `YYYY-MM-DDTHH:MM:SSZ`.
    static func text(_ date: Date) -> String {
        let seconds = seconds(date)
        let days = floorDiv(seconds, 86_400)
        let second = seconds - days * 86_400
        return dateText(civil(fromDays: days))
            + "T\(pad(second / 3600, 2)):\(pad(second % 3600 / 60, 2)):\(pad(second % 60, 2))Z"
    }

    /// Reads back exactly what ``text(_:)`` writes; nil for anything else.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = days(fromCivil: (year, month, day))
        guard civil(fromDays: days) == (year, month, day) else { return nil }  // 2026-02-30
        return date(seconds: days * 86_400 + hour * 3600 + minute * 60 + second)
    }

    /// The day number (days since 1970-01-01) of the Monday on or before the given moment.
    static func mondayDays(containingSeconds seconds: Int64) -> Int64 {
        let days = floorDiv(seconds, 86_400)
        // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
        return days - floorMod(days + 3, 7)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        a - floorDiv(a, b) * b
    }

    /// Year, month, day of a day number.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// The day number of a year, month, day.
    static func days(fromCivil date: (year: Int64, month: Int64, day: Int64)) -> Int64 {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = floorDiv(year, 400)
        let yearOfEra = year - era * 400
        let shiftedMonth = date.month > 2 ? date.month - 3 : date.month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func dateText(_ date: (year: Int64, month: Int64, day: Int64)) -> String {
        "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))"
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
