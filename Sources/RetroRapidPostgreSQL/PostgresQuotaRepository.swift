import Foundation
import RetroRapidDomain

/// The daily free plays: counting them, consuming one atomically when a game starts.
///
/// Plays are counted per player per UTC day: a row in `plays` per play consumed, as in
/// SQLite. How the last free play goes to exactly one start, however many nodes and
/// connections race for it: consuming first locks the player's row (`SELECT … FOR NO KEY UPDATE`,
/// ``PostgresPlayerLookup``), so one player's consumes run one after another; the count of the
/// day's plays and the conditional INSERT after it then see every play committed before the
/// lock was granted (READ COMMITTED reads afresh per statement). Exactly one racer inserts,
/// the others wait, count the full day and are refused. A player with unlimited play consumes
/// nothing; a game id that already has its row (a resumed game) consumes no second one, and
/// `UNIQUE (player_id, game_id)` backs that.
///
/// Like its ``PostgresConnection``, a repository is used from one thread at a time (a storage thread).
public struct PostgresQuotaRepository: QuotaRepository {
    public let connection: PostgresConnection
    public let dailyFreePlays: Int

    /// - Parameter dailyFreePlays: free plays per player per UTC day; 0 or more.
    public init(connection: PostgresConnection, dailyFreePlays: Int = 5) {
        precondition(dailyFreePlays >= 0, "dailyFreePlays must not be negative")
        self.connection = connection
        self.dailyFreePlays = dailyFreePlays
    }

    /// The player's plays today. `.notFound` for an unknown player.
    public func status(playerID: Int64, now: Date) throws -> QuotaStatus {
        try connection.transaction(.repeatableRead) { db in
            try PostgresPlayerLookup.requirePlayer(playerID, in: db)
            return try currentStatus(db, playerID: playerID, now: now)
        }
    }

    /// Consumes one free play for a game that starts now, and returns the status after it.
    /// The rules are SQLite's (`SQLiteQuotaRepository`): nil `gameID` always consumes; a game
    /// that already consumed a play consumes no second one; ``QuotaExhaustedError`` when none
    /// is left today (nothing changes).
    @discardableResult
    public func consumePlay(playerID: Int64, gameID: String? = nil, now: Date) throws -> QuotaStatus {
        let gameID = try QuotaStatus.validatedGameID(gameID)
        return try connection.transaction { db in
            try consumePlay(db, playerID: playerID, gameID: gameID, now: now).status
        }
    }

    /// The body of ``consumePlay(playerID:gameID:now:)`` inside an open transaction
    /// (``PostgresRunningGameRepository/begin(_:)`` starts a game in the same one). Locks the
    /// player's row until that transaction ends. `consumed` is false when no row was added
    /// (unlimited play, or the game already had one).
    func consumePlay(_ db: PostgresConnection, playerID: Int64, gameID: String?, now: Date) throws -> (status: QuotaStatus, consumed: Bool) {
        try PostgresPlayerLookup.requirePlayer(playerID, in: db, lockingRow: true)
        if try PostgresEntitlementRepository.unlimited(playerID: playerID, in: db) != nil {
            return (try currentStatus(db, playerID: playerID, now: now), false)
        }
        if let gameID, try !db.execute("SELECT 1 FROM plays WHERE player_id = $1 AND game_id = $2", [playerID, gameID]).isEmpty {
            return (try currentStatus(db, playerID: playerID, now: now), false)
        }
        let inserted = try db.execute("""
            INSERT INTO plays (player_id, day, game_id, consumed_at)
            SELECT $1, $2, $3, $4
            WHERE (SELECT count(*) FROM plays WHERE player_id = $1 AND day = $2) < $5
            """, [playerID, UTCCivilTime.day(now), gameID, UTCCivilTime.text(now), dailyFreePlays])
        let status = try currentStatus(db, playerID: playerID, now: now)
        guard inserted.affectedRows == 1 else { throw QuotaExhaustedError(status: status, now: now) }
        return (status, true)
    }

    /// The status inside an open transaction.
    func currentStatus(_ db: PostgresConnection, playerID: Int64, now: Date) throws -> QuotaStatus {
        let used = try db.execute("SELECT count(*) FROM plays WHERE player_id = $1 AND day = $2",
                                  [playerID, UTCCivilTime.day(now)]).first?.int(at: 0) ?? 0
        let unlimited = try PostgresEntitlementRepository.unlimited(playerID: playerID, in: db) != nil
        return QuotaStatus(now: now, dailyFreePlays: dailyFreePlays, playsUsed: used, unlimited: unlimited)
    }
}
