import Foundation
import RetroRapidDomain

/// The daily free plays: counting them, consuming one atomically when a game starts.
///
/// Plays are counted per player per UTC day: a row in `plays` per play consumed. Consuming is one
/// conditional INSERT (insert only while the day's count is under the limit) inside an IMMEDIATE
/// transaction, so SQLite's write lock serialises two devices racing for the last play: exactly
/// one inserts, the other sees the full count and is refused. A player with unlimited play
/// consumes nothing.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteQuotaRepository: QuotaRepository {
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
            try SQLitePlayerRepository.requirePlayer(playerID, in: db)
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
        let gameID = try QuotaStatus.validatedGameID(gameID)
        return try database.transaction(.immediate) { db in
            try consumePlay(db, playerID: playerID, gameID: gameID, now: now).status
        }
    }

    /// The body of ``consumePlay(playerID:gameID:now:)`` inside an open write transaction
    /// (``RunningGameRepository/begin(_:)`` starts a game in the same one).
    /// `consumed` is false when no row was added (unlimited play, or the game already had one).
    func consumePlay(_ db: Database, playerID: Int64, gameID: String?, now: Date) throws -> (status: QuotaStatus, consumed: Bool) {
        try SQLitePlayerRepository.requirePlayer(playerID, in: db)
        if try SQLiteEntitlementRepository.unlimited(playerID: playerID, in: db) != nil {
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
        let used = try db.prepare("SELECT count(*) FROM plays WHERE player_id = ? AND day = ?")
            .query([playerID, UTCCivilTime.day(now)]) { $0.int(at: 0) }.first ?? 0
        let unlimited = try SQLiteEntitlementRepository.unlimited(playerID: playerID, in: db) != nil
        return QuotaStatus(now: now, dailyFreePlays: dailyFreePlays, playsUsed: used, unlimited: unlimited)
    }
}
