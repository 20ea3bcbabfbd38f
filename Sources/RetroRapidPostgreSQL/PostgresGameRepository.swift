import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// Finished games (table `games`) and, through them, the leaderboards: the rules of
/// `SQLiteGameRepository`.
///
/// How they stay exact with many connections and nodes (READ COMMITTED):
/// - ``record(_:)`` stores the game, ends its running game and offers its score to the three
///   boards of its level in one transaction: a game is never stored without its scores, nor
///   scores without their game.
/// - Each offer is one `INSERT … ON CONFLICT DO UPDATE … WHERE excluded.score > score`:
///   PostgreSQL locks the player's existing best and re-checks the WHERE against its newest
///   version, so of two games of one player recorded at once the higher score stays, whatever
///   order they commit in (an equal score keeps the earlier time).
/// - `score_counts` is kept by the schema's trigger on `best_scores`, in the same transaction;
///   its `INSERT … ON CONFLICT DO UPDATE` and its decrement take the count's row lock, so
///   counts never lose an update. A best only rises, so one board's counts are locked in
///   ascending score order and the boards always day, week, all: two records cannot deadlock
///   on them (were one to, ``PostgresConnection/transaction(_:attempts:_:)`` runs it again).
/// - A public id is stored once: `games.public_id` is UNIQUE.
///
/// Like its ``PostgresConnection``, a repository is used from one thread at a time (a storage thread).
public struct PostgresGameRepository: GameRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Stores a finished game and updates the leaderboards, in one transaction. A game with a
    /// public id also leaves `running_games` in it, so it is never both stored and running.
    @discardableResult
    public func record(_ game: NewGame) throws -> RecordedGame {
        try game.validate()
        return try connection.transaction { db in
            try Self.insert(game, db)
        }
    }

    /// The body of ``record(_:)`` inside an open transaction (also used by
    /// ``PostgresRunningGameRepository/recoverAll(now:)``). `game` must have been validated.
    static func insert(_ game: NewGame, _ db: PostgresConnection) throws -> RecordedGame {
        let startedAt = UTCCivilTime.text(game.startedAt)
        let endedAt = UTCCivilTime.text(game.endedAt)
        try SQLPlayerLookup.requirePlayer(game.playerID, in: db)
        if let day = game.road.day, !game.practice {
            // One scored daily game per player, day and level (games_one_scored_daily backs it
            // against two records at once).
            if let earlier = try db.execute("""
                SELECT public_id FROM games WHERE player_id = $1 AND level = $2 AND daily_day = $3 AND NOT practice
                """, [game.playerID, game.level.rawValue, day.text]).first {
                throw DailyRoadPlayedError(level: game.level, day: day, gameID: earlier.optionalString(at: 0) ?? "")
            }
        }
        guard let id = try db.execute("""
            INSERT INTO games (public_id, player_id, level, seed, rules_version, input_log, score, steps, end_reason,
                               practice, started_at, ended_at, duration_ms, play_refunded, road, daily_day)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
            RETURNING id
            """, [
                game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                game.inputLog.encoded, game.score, game.steps, game.endReason.rawValue,
                game.practice, startedAt, endedAt, game.durationMilliseconds, game.playRefunded,
                game.road.name, game.road.day?.text,
            ]).first?.int64(at: 0) else {
            throw StoreError.unreadable("games returned no id for the row just inserted")
        }
        if let publicID = game.publicID {
            try db.execute("DELETE FROM running_games WHERE public_id = $1", [publicID])
        }
        let stored = GameRecord(
            id: id, publicID: game.publicID, playerID: game.playerID, level: game.level, seed: game.seed,
            rulesVersion: game.rulesVersion, inputLog: game.inputLog.encoded, score: game.score, steps: game.steps,
            endReason: game.endReason, practice: game.practice, startedAt: UTCCivilTime.parse(startedAt) ?? game.startedAt,
            endedAt: UTCCivilTime.parse(endedAt) ?? game.endedAt, durationMilliseconds: game.durationMilliseconds,
            playRefunded: game.playRefunded, road: game.road)
        guard !game.practice else { return RecordedGame(game: stored, standings: []) }

        return try RecordedGame.scored(stored, endedAt: game.endedAt, achievedAt: endedAt) { level, period, key in
            PostgresLeaderboardRepository.Reads(db: db, board: .init(level: level, period: period, key: key))
        }
    }

    /// The game with this id, or nil.
    public func game(id: Int64) throws -> GameRecord? {
        try connection.execute("SELECT \(Self.columns) FROM games WHERE id = $1", [id]).map(Self.record).first
    }

    /// The game the player was shown as `publicID` (its `gameId`), or nil.
    public func game(publicID: String) throws -> GameRecord? {
        try connection.execute("SELECT \(Self.columns) FROM games WHERE public_id = $1", [publicID]).map(Self.record).first
    }

    /// The player's games, newest first: `limit` of them, before the game `before` when given.
    /// An unknown player is `StoreError.notFound`.
    public func games(playerID: Int64, limit: Int = 20, before: Int64? = nil) throws -> [GameRecord] {
        let limit = try GameRecord.validatedPageSize(limit)
        return try connection.transaction(.repeatableRead) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: db)
            return try db.execute("""
                SELECT \(Self.columns) FROM games
                WHERE player_id = $1 AND id < $2
                ORDER BY id DESC
                LIMIT $3
                """, [playerID, before ?? Int64.max, limit]).map(Self.record)
        }
    }

    /// Calls `body` with every stored game in id order, starting after `afterID`, `batchSize`
    /// at a time: each batch its own statement, so a long walk holds no snapshot open and
    /// reaches games stored meanwhile.
    public func forEachGame(afterID: Int64 = 0, batchSize: Int = 500, _ body: (GameRecord) throws -> Void) throws {
        precondition(batchSize > 0, "batchSize must be positive")
        var last = afterID
        while true {
            let batch = try connection.execute("SELECT \(Self.columns) FROM games WHERE id > $1 ORDER BY id LIMIT $2",
                                               [last, batchSize]).map(Self.record)
            for game in batch { try body(game) }
            guard let end = batch.last, batch.count == batchSize else { return }
            last = end.id
        }
    }

    private static let columns = """
        id, player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
        started_at, ended_at, duration_ms, public_id, play_refunded, road, daily_day
        """

    private static func record(_ row: PostgresRow) throws -> GameRecord {
        let id = row.int64(at: 0)
        guard let level = SpeedLevel(rawValue: row.string(at: 2)),
              let endReason = GameEndReason(rawValue: row.string(at: 8)),
              let startedAt = UTCCivilTime.parse(row.string(at: 10)),
              let endedAt = UTCCivilTime.parse(row.string(at: 11)),
              let road = GameRoad(storedName: row.string(at: 15), day: row.optionalString(at: 16))
        else {
            throw StoreError.unreadable("games row \(id) holds a value this build cannot read")
        }
        return GameRecord(
            id: id, publicID: row.optionalString(at: 13), playerID: row.int64(at: 1), level: level,
            seed: UInt64(bitPattern: row.int64(at: 3)), rulesVersion: row.int(at: 4), inputLog: row.string(at: 5),
            score: row.int(at: 6), steps: row.int(at: 7), endReason: endReason, practice: row.bool(at: 9),
            startedAt: startedAt, endedAt: endedAt, durationMilliseconds: row.int(at: 12), playRefunded: row.bool(at: 14), road: road)
    }
}
