import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// The daily roads (`daily_roads`) and their boards on SQLite.
///
/// - A day's seed is drawn at random and offered with `INSERT … ON CONFLICT DO NOTHING`, then
///   read back in the same IMMEDIATE transaction: whoever asks first stores it, everyone after
///   (on this file's one writer at a time) reads that row.
/// - The board is `best_scores` rows under the key ``UTCDay/boardKey`` (`daily:2026-12-01`,
///   period `day`), written by `GameRepository.record` for scored daily games, and read with
///   ``SQLiteLeaderboardRepository``'s queries: the same ranks, ties and cursors.
/// - The one scored attempt is a `daily_attempts` row, taken by ``takeAttempt(_:day:_:)`` inside
///   `RunningGameRepository.begin`'s transaction.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteDailyRoadRepository: DailyRoadRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor
    let leaderboards: SQLiteLeaderboardRepository

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        let statements = statements ?? SQLiteExecutor(database: database)
        self.statements = statements
        self.leaderboards = SQLiteLeaderboardRepository(database: database, statements: statements)
    }

    public func seed(level: SpeedLevel, day: UTCDay, now: Date) throws -> UInt64 {
        let day = try day.validatedNotAfterToday(now: now)
        if let stored = try storedSeed(level: level, day: day) { return stored }
        return try database.transaction(.immediate) { _ in
            try statements.prepare("""
                INSERT INTO daily_roads (day, level, seed, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (day, level) DO NOTHING
                """).execute([day.text, level.rawValue, Int64(bitPattern: UTCDay.newSeed()), UTCCivilTime.text(now)])
            guard let seed = try Self.storedSeed(statements, level: level, day: day) else {
                throw StoreError.unreadable("daily_roads lost the row for \(level.rawValue) \(day) just written")
            }
            return seed
        }
    }

    public func storedSeed(level: SpeedLevel, day: UTCDay) throws -> UInt64? {
        try Self.storedSeed(statements, level: level, day: day)
    }

    public func top(level: SpeedLevel, day: UTCDay, limit: Int, after cursor: LeaderboardCursor?, now: Date) throws -> LeaderboardPage {
        let day = try day.validatedNotAfterToday(now: now)
        let limit = try LeaderboardPage.validatedSize(limit)
        let after = try LeaderboardPage.validatedPosition(cursor, level: level, period: .today, daily: day)
        return try leaderboards.page(Self.board(level, day), limit: limit, after: after, now: now, daily: day)
    }

    public func aroundMe(playerID: Int64, level: SpeedLevel, day: UTCDay, neighbours: Int, now: Date) throws -> LeaderboardNeighbourhood? {
        let day = try day.validatedNotAfterToday(now: now)
        let neighbours = try LeaderboardNeighbourhood.validatedNeighbours(neighbours)
        return try leaderboards.neighbourhood(playerID: playerID, board: Self.board(level, day), neighbours: neighbours, now: now, daily: day)
    }

    public func attempt(playerID: Int64, level: SpeedLevel, day: UTCDay) throws -> DailyAttempt? {
        try database.transaction(.deferred) { _ in
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            let rows = try statements.prepare("""
                SELECT a.game_id, a.started_at, g.score FROM daily_attempts a LEFT JOIN games g ON g.public_id = a.game_id
                WHERE a.player_id = ? AND a.level = ? AND a.day = ?
                """).query([playerID, level.rawValue, day.text]) { row in
                    (row.string(at: 0), row.string(at: 1), row.isNull(at: 2) ? nil : row.int(at: 2))
                }
            guard let (gameID, startedAt, score) = rows.first else { return nil }
            var rank: Int?
            if score != nil, let best = try SQLiteLeaderboardRepository.best(statements, Self.board(level, day), playerID: playerID) {
                rank = try SQLiteLeaderboardRepository.rank(statements, Self.board(level, day), of: best.position)
            }
            return DailyAttempt(gameID: gameID, startedAt: try UTCCivilTime.storedDate(startedAt, column: "daily_attempts.started_at"),
                                score: score, rank: rank)
        }
    }

    // MARK: - Shared with the running games (inside begin's transaction)

    static func board(_ level: SpeedLevel, _ day: UTCDay) -> SQLiteLeaderboardRepository.Board {
        SQLiteLeaderboardRepository.Board(level: level, period: .today, key: day.boardKey)
    }

    static func storedSeed(_ db: SQLiteExecutor, level: SpeedLevel, day: UTCDay) throws -> UInt64? {
        try db.prepare("SELECT seed FROM daily_roads WHERE day = ? AND level = ?")
            .query([day.text, level.rawValue]) { UInt64(bitPattern: $0.int64(at: 0)) }.first
    }

    /// A daily game runs on its day's stored road: `.invalid` for another seed, or a day whose
    /// road was never made (the server asks for the seed first).
    static func requireDailySeed(_ game: RunningGameStart, day: UTCDay, _ db: SQLiteExecutor) throws {
        guard let seed = try storedSeed(db, level: game.level, day: day), seed == game.seed else {
            throw StoreError(.invalid, "is not the seed of the \(game.level.rawValue) daily road of \(day)", field: "seed")
        }
    }

    /// Takes the player's one scored attempt at the day's road for `game`, or throws
    /// ``DailyRoadPlayedError`` (and the caller's transaction rolls back: nothing is consumed).
    static func takeAttempt(_ game: RunningGameStart, day: UTCDay, _ db: SQLiteExecutor) throws {
        let taken = try db.prepare("""
            INSERT INTO daily_attempts (player_id, level, day, game_id, started_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (player_id, level, day) DO NOTHING
            RETURNING 1
            """).query([game.playerID, game.level.rawValue, day.text, game.publicID, UTCCivilTime.text(game.startedAt)]) { _ in true }
        guard taken.isEmpty else { return }
        let earlier = try db.prepare("SELECT game_id FROM daily_attempts WHERE player_id = ? AND level = ? AND day = ?")
            .query([game.playerID, game.level.rawValue, day.text]) { $0.string(at: 0) }.first
        throw DailyRoadPlayedError(level: game.level, day: day, gameID: earlier ?? "")
    }
}
