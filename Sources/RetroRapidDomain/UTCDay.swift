import Foundation

/// One UTC day, `2026-12-01`: the key of a daily road and of its board. Read only from text in
/// exactly that form (a real calendar date), so a day in a URL or a stored row is checked once.
public struct UTCDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// `YYYY-MM-DD`.
    public let text: String
    /// Days since 1970-01-01.
    package let number: Int64

    /// Nil for anything but a real date written `YYYY-MM-DD` (years 0001–9999).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let midnight = UTCCivilTime.parse(text + "T00:00:00Z")
        else { return nil }
        self.text = text
        self.number = UTCCivilTime.floorDiv(UTCCivilTime.seconds(midnight), 86_400)
        guard number >= UTCCivilTime.days(fromCivil: (1, 1, 1)) else { return nil }
    }

    /// The UTC day `date` falls in.
    public init(containing date: Date) {
        number = UTCCivilTime.floorDiv(UTCCivilTime.seconds(date), 86_400)
        text = UTCCivilTime.day(date)
    }

    /// 00:00 UTC of the day.
    public var start: Date { UTCCivilTime.date(seconds: number * 86_400) }

    /// 00:00 UTC of the next day: when the day's road and board are over (`resetsAt`).
    public var end: Date { UTCCivilTime.date(seconds: (number + 1) * 86_400) }

    public var description: String { text }

    public static func < (lhs: UTCDay, rhs: UTCDay) -> Bool { lhs.number < rhs.number }
}
