import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Finished games (table `games`) and, through them, the leaderboards.
///
/// ``record(_:)`` is the one writer: it stores the game, ends its running game and offers its
/// score to the player's three boards for the game's level (today, this week, all time) in one
/// write transaction, so a game is never stored without its scores or scores without their
/// game, and what it returns (personal bests, ranks) is what was committed. A game whose
/// `record` returned survives a crash or power loss right after (docs/OPERATIONS.md,
/// "Durability"). With many connections and nodes (PostgreSQL, READ COMMITTED):
/// - each offer is one `INSERT … ON CONFLICT DO UPDATE … WHERE excluded.score > score`, so of
///   two games of one player recorded at once the higher score stays, whatever order they
///   commit in (an equal score keeps the earlier time);
/// - `score_counts` is kept by the schema's trigger on `best_scores`, in the same transaction;
///   a best only rises, so one board's counts are locked in ascending score order and the
///   boards always day, week, all: two records cannot deadlock on them (were one to, the
///   executor's write transaction runs it again);
/// - a public id is stored once: `games.public_id` is UNIQUE.
///
/// Refusals are `StoreError` (`invalid` with the field, `notFound` for an unknown player) and
/// change nothing; the backend's own error means a real failure.
///
/// Threading rule: as its executor, one thread at a time (a storage thread).
public struct SQLGameRepository: GameRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// Stores a finished game and updates the leaderboards, in one transaction. A game with a
    /// public id also leaves `running_games` in it, so it is never both stored and running.
    @discardableResult
    public func record(_ game: NewGame) throws -> RecordedGame {
        try game.validate()
        return try executor.writeTransaction {
            try Self.insert(game, executor)
        }
    }

    /// The body of ``record(_:)`` inside an open write transaction (also used by
    /// ``SQLRunningGameRepository``'s recovery). `game` must have been validated.
    static func insert(_ game: NewGame, _ db: any SQLExecutor) throws -> RecordedGame {
        let startedAt = UTCCivilTime.text(game.startedAt)
        let endedAt = UTCCivilTime.text(game.endedAt)
        try SQLPlayerLookup.requirePlayer(game.playerID, in: db)
        if let day = game.road.day, !game.practice {
            // One scored daily game per player, day and level (games_one_scored_daily backs it
            // against two records at once).
            if let earlier = try db.query("""
                SELECT public_id FROM games WHERE player_id = $1 AND level = $2 AND daily_day = $3 AND NOT practice
                """, [game.playerID, game.level.rawValue, day.text]).first {
                throw DailyRoadPlayedError(level: game.level, day: day, gameID: try earlier.optionalString("public_id") ?? "")
            }
        }
        guard let id = try db.query("""
            INSERT INTO games (public_id, player_id, level, seed, rules_version, input_log, score, steps, end_reason,
                               practice, started_at, ended_at, duration_ms, play_refunded, road, daily_day)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
            RETURNING id
            """, [
                game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                game.inputLog.encoded, game.score, game.steps, game.endReason.rawValue,
                game.practice, startedAt, endedAt, game.durationMilliseconds, game.playRefunded,
                game.road.name, game.road.day?.text,
            ]).first else {
            throw StoreError.unreadable("games returned no id for the row just inserted")
        }
        if let publicID = game.publicID {
            try db.query("DELETE FROM running_games WHERE public_id = $1", [publicID])
        }
        let stored = GameRecord(
            id: try id.int64("id"), publicID: game.publicID, playerID: game.playerID, level: game.level, seed: game.seed,
            rulesVersion: game.rulesVersion, inputLog: game.inputLog.encoded, score: game.score, steps: game.steps,
            endReason: game.endReason, practice: game.practice, startedAt: UTCCivilTime.parse(startedAt) ?? game.startedAt,
            endedAt: UTCCivilTime.parse(endedAt) ?? game.endedAt, durationMilliseconds: game.durationMilliseconds,
            playRefunded: game.playRefunded, road: game.road)
        guard !game.practice else { return RecordedGame(game: stored, standings: []) }

        return try RecordedGame.scored(stored, endedAt: game.endedAt, achievedAt: endedAt) { level, period, key in
            SQLLeaderboardRepository.Reads(db: db, board: .init(level: level, period: period, key: key))
        }
    }

    /// The game with this id, or nil.
    public func game(id: Int64) throws -> GameRecord? {
        try executor.query("SELECT \(Self.columns) FROM games WHERE id = $1", [id]).first.map(Self.record)
    }

    /// The game the player was shown as `publicID` (its `gameId`), or nil.
    public func game(publicID: String) throws -> GameRecord? {
        try executor.query("SELECT \(Self.columns) FROM games WHERE public_id = $1", [publicID]).first.map(Self.record)
    }

    /// The player's games, newest first: `limit` of them, before the game `before` when given
    /// (pass the last id of a page for the next). An unknown player is `StoreError.notFound`.
    public func games(playerID: Int64, limit: Int = 20, before: Int64? = nil) throws -> [GameRecord] {
        let limit = try GameRecord.validatedPageSize(limit)
        return try executor.readTransaction {
            try SQLPlayerLookup.requirePlayer(playerID, in: executor)
            return try executor.query("""
                SELECT \(Self.columns) FROM games
                WHERE player_id = $1 AND id < $2
                ORDER BY id DESC
                LIMIT $3
                """, [playerID, before ?? Int64.max, limit]).rows.map(Self.record)
        }
    }

    /// Calls `body` with every stored game in id order, starting after `afterID`.
    ///
    /// Reads `batchSize` games at a time, each batch its own statement, so a long walk (a
    /// `verify` of millions of games) never holds a snapshot open (on SQLite one would stall
    /// WAL checkpoints), and games stored meanwhile are reached too.
    public func forEachGame(afterID: Int64 = 0, batchSize: Int = 500, _ body: (GameRecord) throws -> Void) throws {
        precondition(batchSize > 0, "batchSize must be positive")
        var last = afterID
        while true {
            let batch = try executor.query("SELECT \(Self.columns) FROM games WHERE id > $1 ORDER BY id LIMIT $2",
                                           [last, batchSize]).rows.map(Self.record)
            for game in batch { try body(game) }
            guard let end = batch.last, batch.count == batchSize else { return }
            last = end.id
        }
    }

    private static let columns = """
        id, player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
        started_at, ended_at, duration_ms, public_id, play_refunded, road, daily_day
        """

    private static func record(_ row: SQLRow) throws -> GameRecord {
        let id = try row.int64("id")
        guard let level = SpeedLevel(rawValue: try row.string("level")),
              let endReason = GameEndReason(rawValue: try row.string("end_reason")),
              let startedAt = UTCCivilTime.parse(try row.string("started_at")),
              let endedAt = UTCCivilTime.parse(try row.string("ended_at")),
              let road = GameRoad(storedName: try row.string("road"), day: try row.optionalString("daily_day"))
        else {
            throw StoreError.unreadable("games row \(id) holds a value this build cannot read")
        }
        return GameRecord(
            id: id, publicID: try row.optionalString("public_id"), playerID: try row.int64("player_id"), level: level,
            seed: UInt64(bitPattern: try row.int64("seed")), rulesVersion: try row.int("rules_version"),
            inputLog: try row.string("input_log"), score: try row.int("score"), steps: try row.int("steps"),
            endReason: endReason, practice: try row.bool("practice"), startedAt: startedAt, endedAt: endedAt,
            durationMilliseconds: try row.int("duration_ms"), playRefunded: try row.bool("play_refunded"), road: road)
    }
}
