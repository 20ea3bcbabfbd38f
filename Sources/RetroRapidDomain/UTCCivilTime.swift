import Foundation

/// UTC times as every storage table keeps them (games, scores, settings, codes, orders, plays):
/// ISO-8601 text to the second, `2026-01-15T10:23:45Z`, one fixed width so that text order is
/// time order, and UTC days, `2026-01-15`. Dates are floored to the second (not rounded), so a
/// time and the period key derived from it always agree. Pure integer arithmetic (Howard
/// Hinnant's civil-date algorithms): no formatter, locale or calendar, safe on any thread.
package enum UTCCivilTime {
    /// Whole seconds since 1970-01-01T00:00:00Z, floored.
    package static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    package static func date(seconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The seconds ``text(_:)`` can write in its four-digit years, 0000-01-01T00:00:00Z to
    /// 9999-12-31T23:59:59Z. A time from outside (a provider's answer) is checked against it
    /// before it is kept: far beyond it, ``seconds(_:)`` would trap converting the date.
    package static let storableSeconds: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    /// `date` as `YYYY-MM-DDTHH:MM:SSZ`.
    package static func text(_ date: Date) -> String {
        let seconds = seconds(date)
        let days = floorDiv(seconds, 86_400)
        let second = seconds - days * 86_400
        return dateText(civil(fromDays: days))
            + "T\(pad(second / 3600, 2)):\(pad(second % 3600 / 60, 2)):\(pad(second % 60, 2))Z"
    }

    /// Reads back exactly what ``text(_:)`` writes; nil for anything else.
    package static func parse(_ text: String) -> Date? {
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

    /// Stored text back to a date; a malformed stored time is a database fault, not a refusal.
    package static func storedDate(_ text: String, column: String) throws -> Date {
        guard let date = parse(text) else {
            throw StoreError.unreadable("\(column) holds '\(text)', not an ISO-8601 UTC time")
        }
        return date
    }

    /// `2026-01-15`, the UTC day of `date`.
    package static func day(_ date: Date) -> String {
        dateText(civil(fromDays: floorDiv(seconds(date), 86_400)))
    }

    /// The first UTC midnight strictly after `date`.
    package static func nextMidnight(after date: Date) -> Date {
        self.date(seconds: (floorDiv(seconds(date), 86_400) + 1) * 86_400)
    }

    /// The day number (days since 1970-01-01) of the Monday on or before the given moment.
    package static func mondayDays(containingSeconds seconds: Int64) -> Int64 {
        let days = floorDiv(seconds, 86_400)
        // 1970-01-01 was a Thursday: (days + 3) mod 7 is 0 on Mondays.
        return days - floorMod(days + 3, 7)
    }

    package static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    package static func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        a - floorDiv(a, b) * b
    }

    /// Year, month, day of a day number.
    package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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
    package static func days(fromCivil date: (year: Int64, month: Int64, day: Int64)) -> Int64 {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = floorDiv(year, 400)
        let yearOfEra = year - era * 400
        let shiftedMonth = date.month > 2 ? date.month - 3 : date.month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package static func dateText(_ date: (year: Int64, month: Int64, day: Int64)) -> String {
        "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))"
    }

    package static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
