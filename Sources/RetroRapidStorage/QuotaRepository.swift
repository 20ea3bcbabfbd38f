import CSQLite3
import Foundation

/// Where a player stands with today's free plays (DESIGN §4, "Daily free plays").
public struct QuotaStatus: Sendable, Equatable, CustomStringConvertible {
    /// The UTC day the counts are for, `YYYY-MM-DD`.
    public let day: String
    /// Free plays a day (configurable, 5 by default).
    public let dailyFreePlays: Int
    /// Free plays consumed today.
    public let playsUsed: Int
    /// The player has unlimited play: no play is consumed and `playsLeft` does not limit them.
    public let unlimited: Bool
    /// The next UTC midnight, when the count starts again.
    public let resetsAt: Date

    public init(day: String, dailyFreePlays: Int, playsUsed: Int, unlimited: Bool, resetsAt: Date) {
        self.day = day
        self.dailyFreePlays = dailyFreePlays
        self.playsUsed = playsUsed
        self.unlimited = unlimited
        self.resetsAt = resetsAt
    }

    /// Free plays still available today (0 when used up, whatever `unlimited` says).
    public var playsLeft: Int { max(0, dailyFreePlays - playsUsed) }

    /// Whether starting a game now would be allowed.
    public var canPlay: Bool { unlimited || playsLeft > 0 }

    public var description: String {
        unlimited
            ? "unlimited play (\(day))"
            : "\(playsUsed) of \(dailyFreePlays) free plays used on \(day), \(playsLeft) left, resets at \(CommerceTime.text(resetsAt))"
    }
}

/// Thrown by ``QuotaRepository/consumePlay(playerID:gameID:now:)`` when no free play is left.
///
/// It carries the player's ``QuotaStatus`` (so the caller can show the plays and the reset time)
/// and the ``StoreError`` (`.forbidden`, field `plays`) to map to HTTP 403 or a WebSocket error.
/// Callers that map errors generically: catch this before `StoreError` and use `storeError`.
public struct QuotaExhaustedError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: QuotaStatus
    public let storeError: StoreError

    public init(status: QuotaStatus, now: Date) {
        self.status = status
        let wait = CommerceTime.durationText(from: now, to: status.resetsAt)
        self.storeError = StoreError(
            .forbidden,
            "No free plays left today; they reset at 00:00 UTC (in \(wait)). Unlimited play: redeem a code or buy it on the Unlock page.",
            field: "plays"
        )
    }

    public var description: String { storeError.description }
}

/// The daily free plays: counting them, consuming one atomically when a game starts.
///
/// Plays are counted per player per UTC day: a row in `plays` per play consumed. Consuming is one
/// conditional INSERT (insert only while the day's count is under the limit) inside an IMMEDIATE
/// transaction, so SQLite's write lock serialises two devices racing for the last play: exactly
/// one inserts, the other sees the full count and is refused. A player with unlimited play
/// consumes nothing.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct QuotaRepository {
    public let database: Database
    public let dailyFreePlays: Int

    /// - Parameter dailyFreePlays: free plays per player per UTC day; 0 or more.
    public init(database: Database, dailyFreePlays: Int = 5) {
        precondition(dailyFreePlays >= 0, "dailyFreePlays must not be negative")
        self.database = database
        self.dailyFreePlays = dailyFreePlays
    }

    /// The player's plays today. `.notFound` for an unknown player.
    public func status(playerID: Int64, now: Date) throws -> QuotaStatus {
        try database.transaction(.deferred) { db in
            try CommercePlayers.require(playerID, in: db)
            return try currentStatus(db, playerID: playerID, now: now)
        }
    }

    /// Consumes one free play for a game that starts now, and returns the status after it.
    ///
    /// - Parameter gameID: the game being started. A game that already consumed a play (a resumed
    ///   game, even after midnight) consumes no second one; nil always consumes.
    /// - Returns: the status after the play; unchanged for a player with unlimited play.
    /// - Throws: ``QuotaExhaustedError`` when no free play is left today (nothing changes);
    ///   `StoreError(.notFound)` for an unknown player, `.invalid` for an empty game id.
    @discardableResult
    public func consumePlay(playerID: Int64, gameID: String? = nil, now: Date) throws -> QuotaStatus {
        if let gameID, gameID.isEmpty {
            throw StoreError(.invalid, "The game id is empty; pass nil when there is no game id.", field: "gameID")
        }
        return try database.transaction(.immediate) { db in
            try CommercePlayers.require(playerID, in: db)
            if try EntitlementRepository.unlimited(playerID: playerID, in: db) != nil {
                return try currentStatus(db, playerID: playerID, now: now)
            }
            if let gameID {
                let alreadyCounted = try db.prepare("SELECT 1 FROM plays WHERE player_id = ? AND game_id = ?")
                    .query([playerID, gameID]) { _ in true }
                if !alreadyCounted.isEmpty { return try currentStatus(db, playerID: playerID, now: now) }
            }
            let day = CommerceTime.day(now)
            try db.prepare("""
                INSERT INTO plays (player_id, day, game_id, consumed_at)
                SELECT ?1, ?2, ?3, ?4
                WHERE (SELECT count(*) FROM plays WHERE player_id = ?1 AND day = ?2) < ?5
                """).execute([playerID, day, gameID, CommerceTime.text(now), dailyFreePlays])
            let consumed = db.changes == 1
            let status = try currentStatus(db, playerID: playerID, now: now)
            guard consumed else { throw QuotaExhaustedError(status: status, now: now) }
            return status
        }
    }

    /// The status inside an open transaction.
    private func currentStatus(_ db: Database, playerID: Int64, now: Date) throws -> QuotaStatus {
        let day = CommerceTime.day(now)
        let used = try db.prepare("SELECT count(*) FROM plays WHERE player_id = ? AND day = ?")
            .query([playerID, day]) { $0.int(at: 0) }.first ?? 0
        let unlimited = try EntitlementRepository.unlimited(playerID: playerID, in: db) != nil
        return QuotaStatus(
            day: day,
            dailyFreePlays: dailyFreePlays,
            playsUsed: used,
            unlimited: unlimited,
            resetsAt: CommerceTime.nextMidnight(after: now)
        )
    }
}

/// The refusal every commerce repository gives for a player id with no row.
enum CommercePlayers {
    static func require(_ playerID: Int64, in db: Database) throws {
        let found = try db.prepare("SELECT 1 FROM players WHERE id = ?").query([playerID]) { _ in true }
        guard !found.isEmpty else {
            throw StoreError(.notFound, "No player with id \(playerID).", field: "playerID")
        }
    }
}

/// UTC times as the commerce tables store them: `2026-01-15T10:23:45Z` (whole seconds) and days
/// `2026-01-15`. Written out with integer arithmetic on Unix time (UTC has no daylight saving,
/// and Unix time has no leap seconds), so no formatter, locale or calendar is involved.
enum CommerceTime {
    static let secondsPerDay: Int64 = 86_400

    /// Whole seconds since 1970, rounded down (so 23:59:59.5 is still 23:59:59).
    static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    /// `2026-01-15T10:23:45Z`.
    static func text(_ date: Date) -> String {
        let total = seconds(date)
        let (days, secondOfDay) = floorDivide(total, secondsPerDay)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        return dayText(days) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + "Z"
    }

    /// `2026-01-15`, the UTC day of `date`.
    static func day(_ date: Date) -> String {
        dayText(floorDivide(seconds(date), secondsPerDay).quotient)
    }

    /// The first UTC midnight strictly after `date`.
    static func nextMidnight(after date: Date) -> Date {
        let days = floorDivide(seconds(date), secondsPerDay).quotient + 1
        return Date(timeIntervalSince1970: TimeInterval(days * secondsPerDay))
    }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ`; nil for anything else.
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * secondsPerDay + hour * 3600 + minute * 60 + second))
    }

    /// Stored text back to a date; a malformed stored time is a database fault, not a refusal.
    static func storedDate(_ text: String, column: String) throws -> Date {
        guard let date = date(text) else {
            throw DatabaseError(extendedCode: SQLITE_CORRUPT, message: "\(column) holds '\(text)', not an ISO-8601 UTC time")
        }
        return date
    }

    /// "3 h 12 min", "45 min", "1 min": the wait from `start` to `end`, minutes rounded up.
    static func durationText(from start: Date, to end: Date) -> String {
        let minutes = max(0, Int((end.timeIntervalSince(start) / 60).rounded(.up)))
        let (hours, rest) = (minutes / 60, minutes % 60)
        switch (hours, rest) {
        case (0, _): return "\(rest) min"
        case (_, 0): return "\(hours) h"
        default: return "\(hours) h \(rest) min"
        }
    }

    // MARK: - Civil calendar (proleptic Gregorian), after Howard Hinnant's algorithms

    private static func dayText(_ days: Int64) -> String {
        let (year, month, day) = civilFromDays(days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    private static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097).quotient
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400).quotient
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value / divisor - (value % divisor < 0 ? 1 : 0)
        return (quotient, value - quotient * divisor)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
