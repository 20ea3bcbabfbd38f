import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// Finished games (table `games`) and, through them, the leaderboards.
///
/// ``record(_:)`` is the one writer: it stores the game and offers its score to the player's
/// three boards for the game's level (today, this week, all time) in one IMMEDIATE
/// transaction, so a game is never stored without its scores or scores without their game,
/// and what it returns (personal bests, ranks) is what was committed. With the connection's
/// default `synchronous=FULL`, a game whose `record` returned survives a crash or power loss
/// right after (docs/OPERATIONS.md, "Durability").
///
/// Refusals are `StoreError` (`invalid` with the field, `notFound` for an unknown player) and
/// change nothing; `DatabaseError` means a real failure.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteGameRepository: GameRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }

    /// Stores a finished game and updates the leaderboards, in one transaction. A game with a
    /// public id also leaves `running_games` in it, so it is never both stored and running.
    @discardableResult
    public func record(_ game: NewGame) throws -> RecordedGame {
        try game.validate()
        return try database.transaction(.immediate) { _ in
            try Self.insert(game, statements)
        }
    }

    /// The body of ``record(_:)`` inside an open write transaction (also used by
    /// ``RunningGameRepository/recoverAll(now:)``). `game` must have been validated.
    static func insert(_ game: NewGame, _ statements: SQLiteExecutor) throws -> RecordedGame {
        let startedAt = UTCCivilTime.text(game.startedAt)
        let endedAt = UTCCivilTime.text(game.endedAt)
        try SQLPlayerLookup.requirePlayer(game.playerID, in: statements)
        if let day = game.road.day, !game.practice {
            // One scored daily game per player, day and level (games_one_scored_daily backs it).
            if let earlier = try statements.prepare("""
                SELECT public_id FROM games WHERE player_id = ? AND level = ? AND daily_day = ? AND practice = 0
                """).query([game.playerID, game.level.rawValue, day.text], { $0.isNull(at: 0) ? "" : $0.string(at: 0) }).first {
                throw DailyRoadPlayedError(level: game.level, day: day, gameID: earlier)
            }
        }
        try statements.prepare("""
            INSERT INTO games (public_id, player_id, level, seed, rules_version, input_log, score, steps, end_reason,
                               practice, started_at, ended_at, duration_ms, play_refunded, road, daily_day)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute([
                game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                game.inputLog.encoded, game.score, game.steps, game.endReason.rawValue,
                game.practice, startedAt, endedAt, game.durationMilliseconds, game.playRefunded,
                game.road.name, game.road.day?.text,
            ])
        let id = statements.database.lastInsertRowID
        if let publicID = game.publicID {
            try statements.prepare("DELETE FROM running_games WHERE public_id = ?").execute([publicID])
        }
        let stored = GameRecord(
            id: id, publicID: game.publicID, playerID: game.playerID, level: game.level, seed: game.seed,
            rulesVersion: game.rulesVersion, inputLog: game.inputLog.encoded, score: game.score, steps: game.steps,
            endReason: game.endReason, practice: game.practice, startedAt: UTCCivilTime.parse(startedAt) ?? game.startedAt,
            endedAt: UTCCivilTime.parse(endedAt) ?? game.endedAt, durationMilliseconds: game.durationMilliseconds,
            playRefunded: game.playRefunded, road: game.road)
        guard !game.practice else { return RecordedGame(game: stored, standings: []) }

        return try RecordedGame.scored(stored, endedAt: game.endedAt, achievedAt: endedAt) { level, period, key in
            SQLiteLeaderboardRepository.Reads(db: statements, board: .init(level: level, period: period, key: key))
        }
    }

    /// The game with this id, or nil.
    public func game(id: Int64) throws -> GameRecord? {
        try statements.prepare("SELECT \(Self.columns) FROM games WHERE id = ?").query([id], Self.record).first
    }

    /// The game the player was shown as `publicID` (its `gameId`), or nil.
    public func game(publicID: String) throws -> GameRecord? {
        try statements.prepare("SELECT \(Self.columns) FROM games WHERE public_id = ?").query([publicID], Self.record).first
    }

    /// The player's games, newest first: `limit` of them, before the game `before` when given
    /// (pass the last id of a page for the next). An unknown player is `StoreError.notFound`.
    public func games(playerID: Int64, limit: Int = 20, before: Int64? = nil) throws -> [GameRecord] {
        let limit = try GameRecord.validatedPageSize(limit)
        return try database.transaction(.deferred) { _ in
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            return try statements.prepare("""
                SELECT \(Self.columns) FROM games
                WHERE player_id = ? AND id < ?
                ORDER BY id DESC
                LIMIT ?
                """).query([playerID, before ?? Int64.max, limit], Self.record)
        }
    }

    /// Calls `body` with every stored game in id order, starting after `afterID`.
    ///
    /// Reads `batchSize` games at a time, each batch its own short read, so a long walk (a
    /// `verify` of millions of games) never holds a snapshot that would stall WAL checkpoints,
    /// and games stored meanwhile are reached too.
    public func forEachGame(afterID: Int64 = 0, batchSize: Int = 500, _ body: (GameRecord) throws -> Void) throws {
        precondition(batchSize > 0, "batchSize must be positive")
        let statement = try database.prepare("SELECT \(Self.columns) FROM games WHERE id > ? ORDER BY id LIMIT ?")
        var last = afterID
        while true {
            let batch = try statement.query([last, batchSize], Self.record)
            for game in batch { try body(game) }
            guard let end = batch.last, batch.count == batchSize else { return }
            last = end.id
        }
    }

    private static let columns = """
        id, player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
        started_at, ended_at, duration_ms, public_id, play_refunded, road, daily_day
        """

    private static func record(_ row: Statement) throws -> GameRecord {
        let id = row.int64(at: 0)
        guard let level = SpeedLevel(rawValue: row.string(at: 2)),
              let endReason = GameEndReason(rawValue: row.string(at: 8)),
              let startedAt = UTCCivilTime.parse(row.string(at: 10)),
              let endedAt = UTCCivilTime.parse(row.string(at: 11)),
              let road = GameRoad(storedName: row.string(at: 15), day: row.isNull(at: 16) ? nil : row.string(at: 16))
        else {
            throw StoreError.unreadable("games row \(id) holds a value this build cannot read")
        }
        return GameRecord(
            id: id, publicID: row.isNull(at: 13) ? nil : row.string(at: 13), playerID: row.int64(at: 1), level: level, seed: UInt64(bitPattern: row.int64(at: 3)),
            rulesVersion: row.int(at: 4), inputLog: row.string(at: 5), score: row.int(at: 6), steps: row.int(at: 7),
            endReason: endReason, practice: row.bool(at: 9), startedAt: startedAt, endedAt: endedAt,
            durationMilliseconds: row.int(at: 12), playRefunded: row.bool(at: 14), road: road)
    }
}
