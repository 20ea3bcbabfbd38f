import Foundation

/// Where a player stands with today's free plays (docs/API.md, "Players and devices").
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
    /// The status at `now` from the plays counted on its UTC day: every backend builds it so.
    public init(now: Date, dailyFreePlays: Int, playsUsed: Int, unlimited: Bool) {
        self.init(day: UTCCivilTime.day(now), dailyFreePlays: dailyFreePlays, playsUsed: playsUsed, unlimited: unlimited,
                  resetsAt: UTCCivilTime.nextMidnight(after: now))
    }

    /// The game id a play is consumed for: nil (always consumes) or a non-empty id. Every
    /// backend checks it before it writes (`.invalid` otherwise).
    public static func validatedGameID(_ gameID: String?) throws -> String? {
        if let gameID, gameID.isEmpty {
            throw StoreError(.invalid, "The game id is empty; pass nil when there is no game id.", field: "gameID")
        }
        return gameID
    }

    public var playsLeft: Int { max(0, dailyFreePlays - playsUsed) }

    /// Whether starting a game now would be allowed.
    public var canPlay: Bool { unlimited || playsLeft > 0 }

    public var description: String {
        unlimited
            ? "unlimited play (\(day))"
            : "\(playsUsed) of \(dailyFreePlays) free plays used on \(day), \(playsLeft) left, resets at \(UTCCivilTime.text(resetsAt))"
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
        let wait = Self.durationText(from: now, to: status.resetsAt)
        self.storeError = StoreError(
            .forbidden,
            "No free plays left today; they reset at 00:00 UTC (in \(wait)). Unlimited play: redeem a code or buy it on the Unlock page.",
            field: "plays"
        )
    }

    public var description: String { storeError.description }

    /// "3 h 12 min", "45 min", "1 min": the wait from `start` to `end`, minutes rounded up.
    private static func durationText(from start: Date, to end: Date) -> String {
        let minutes = max(0, Int((end.timeIntervalSince(start) / 60).rounded(.up)))
        let (hours, rest) = (minutes / 60, minutes % 60)
        switch (hours, rest) {
        case (0, _): return "\(rest) min"
        case (_, 0): return "\(hours) h"
        default: return "\(hours) h \(rest) min"
        }
    }
}
