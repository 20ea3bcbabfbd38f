import CSQLite3
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
            try consumePlay(db, playerID: playerID, gameID: gameID, now: now).status
        }
    }

    /// The body of ``consumePlay(playerID:gameID:now:)`` inside an open write transaction
    /// (``RunningGameRepository/begin(_:)`` starts a game in the same one).
    /// `consumed` is false when no row was added (unlimited play, or the game already had one).
    func consumePlay(_ db: Database, playerID: Int64, gameID: String?, now: Date) throws -> (status: QuotaStatus, consumed: Bool) {
        try CommercePlayers.require(playerID, in: db)
        if try EntitlementRepository.unlimited(playerID: playerID, in: db) != nil {
            return (try currentStatus(db, playerID: playerID, now: now), false)
        }
        if let gameID {
            let alreadyCounted = try db.prepare("SELECT 1 FROM plays WHERE player_id = ? AND game_id = ?")
                .query([playerID, gameID]) { _ in true }
            if !alreadyCounted.isEmpty { return (try currentStatus(db, playerID: playerID, now: now), false) }
        }
        let day = UTCCivilTime.day(now)
        try db.prepare("""
            INSERT INTO plays (player_id, day, game_id, consumed_at)
            SELECT ?1, ?2, ?3, ?4
            WHERE (SELECT count(*) FROM plays WHERE player_id = ?1 AND day = ?2) < ?5
            """).execute([playerID, day, gameID, UTCCivilTime.text(now), dailyFreePlays])
        let consumed = db.changes == 1
        let status = try currentStatus(db, playerID: playerID, now: now)
        guard consumed else { throw QuotaExhaustedError(status: status, now: now) }
        return (status, true)
    }

    /// The status inside an open transaction.
    func currentStatus(_ db: Database, playerID: Int64, now: Date) throws -> QuotaStatus {
        let day = UTCCivilTime.day(now)
        let used = try db.prepare("SELECT count(*) FROM plays WHERE player_id = ? AND day = ?")
            .query([playerID, day]) { $0.int(at: 0) }.first ?? 0
        let unlimited = try EntitlementRepository.unlimited(playerID: playerID, in: db) != nil
        return QuotaStatus(
            day: day,
            dailyFreePlays: dailyFreePlays,
            playsUsed: used,
            unlimited: unlimited,
            resetsAt: UTCCivilTime.nextMidnight(after: now)
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
