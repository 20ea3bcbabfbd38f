import Foundation
import RetroRapidDomain

/// The daily free plays: counting them, consuming one atomically when a game starts.
///
/// Plays are counted per player per UTC day: a row in `plays` per play consumed. Consuming is
/// one conditional INSERT (insert only while the day's count is under the limit). How the last
/// free play goes to exactly one start, however many devices, connections and nodes race for
/// it: the consume first locks the player's row (SQLite: its IMMEDIATE transaction holds the
/// one write lock; PostgreSQL: `SELECT … FOR NO KEY UPDATE`, ``SQLPlayerLookup``), so one
/// player's consumes run one after another; the count of the day's plays and the conditional
/// INSERT after it then see every play committed before the lock was granted (READ COMMITTED
/// reads afresh per statement). Exactly one racer inserts; the others count the full day and
/// are refused. A player with unlimited play consumes nothing; a game id that already has its
/// row (a resumed game, even after midnight) consumes no second one, and
/// `UNIQUE (player_id, game_id)` backs that.
public struct SQLQuotaRepository: QuotaRepository {
    public let executor: any SQLExecutor
    public let dailyFreePlays: Int

    /// - Parameter dailyFreePlays: free plays per player per UTC day; 0 or more.
    public init(executor: any SQLExecutor, dailyFreePlays: Int = 5) {
        precondition(dailyFreePlays >= 0, "dailyFreePlays must not be negative")
        self.executor = executor
        self.dailyFreePlays = dailyFreePlays
    }

    /// The player's plays today. `.notFound` for an unknown player.
    public func status(playerID: Int64, now: Date) throws -> QuotaStatus {
        try executor.readTransaction {
            try SQLPlayerLookup.requirePlayer(playerID, in: executor)
            return try currentStatus(playerID: playerID, now: now)
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
        return try executor.writeTransaction {
            try consumePlayInTransaction(playerID: playerID, gameID: gameID, now: now).status
        }
    }

    /// The body of ``consumePlay(playerID:gameID:now:)`` inside an open write transaction
    /// (``RunningGameRepository/begin(_:)`` starts a game in the same one). Locks the player's
    /// row until that transaction ends. `consumed` is false when no row was added (unlimited
    /// play, or the game already had one).
    public func consumePlayInTransaction(playerID: Int64, gameID: String?, now: Date) throws -> (status: QuotaStatus, consumed: Bool) {
        try SQLPlayerLookup.requirePlayer(playerID, in: executor, lockingRow: true)
        if try SQLEntitlementRepository.unlimited(playerID: playerID, in: executor) != nil {
            return (try currentStatus(playerID: playerID, now: now), false)
        }
        if let gameID, try !executor.query("SELECT 1 AS found FROM plays WHERE player_id = $1 AND game_id = $2", [playerID, gameID]).isEmpty {
            return (try currentStatus(playerID: playerID, now: now), false)
        }
        let inserted = try executor.query("""
            INSERT INTO plays (player_id, day, game_id, consumed_at)
            SELECT $1, $2, $3, $4
            WHERE (SELECT count(*) FROM plays WHERE player_id = $1 AND day = $2) < $5
            """, [playerID, UTCCivilTime.day(now), gameID, UTCCivilTime.text(now), dailyFreePlays])
        let status = try currentStatus(playerID: playerID, now: now)
        guard inserted.affectedRows == 1 else { throw QuotaExhaustedError(status: status, now: now) }
        return (status, true)
    }

    /// The status inside an open transaction.
    private func currentStatus(playerID: Int64, now: Date) throws -> QuotaStatus {
        let used = try executor.query("SELECT count(*) AS used FROM plays WHERE player_id = $1 AND day = $2",
                                      [playerID, UTCCivilTime.day(now)]).first?.int("used") ?? 0
        let unlimited = try SQLEntitlementRepository.unlimited(playerID: playerID, in: executor) != nil
        return QuotaStatus(now: now, dailyFreePlays: dailyFreePlays, playsUsed: used, unlimited: unlimited)
    }
}
