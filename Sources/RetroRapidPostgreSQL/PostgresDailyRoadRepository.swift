import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// The daily roads (`daily_roads`) and their boards on PostgreSQL: the rules of
/// `SQLiteDailyRoadRepository`, exact with many connections and nodes (READ COMMITTED):
///
/// - **One seed per day and level.** Each asker draws a seed and offers it with
///   `INSERT … ON CONFLICT (day, level) DO NOTHING`, then reads the row in a new statement. Of
///   askers at once, one inserts; the others wait on its uncommitted key, then insert nothing,
///   and their read (a fresh snapshot) sees the committed winner. So every asker gets one seed.
/// - **One scored attempt per player per day per level.** ``takeAttempt(_:day:_:)`` inserts the
///   `daily_attempts` row `ON CONFLICT DO NOTHING` in `begin`'s transaction, under the player's
///   row lock: a second start finds the first's row (or waits for it to commit) and is refused
///   with ``DailyRoadPlayedError``; its transaction rolls back, so no play is consumed.
/// - The board is `best_scores` under ``UTCDay/boardKey``, read with
///   ``PostgresLeaderboardRepository``'s queries in one REPEATABLE READ snapshot.
///
/// Like its ``PostgresConnection``, a repository is used from one thread at a time (a storage thread).
public struct PostgresDailyRoadRepository: DailyRoadRepository {
    public let connection: PostgresConnection
    let leaderboards: PostgresLeaderboardRepository

    public init(connection: PostgresConnection) {
        self.connection = connection
        self.leaderboards = PostgresLeaderboardRepository(connection: connection)
    }

    public func seed(level: SpeedLevel, day: UTCDay, now: Date) throws -> UInt64 {
        let day = try day.validatedNotAfterToday(now: now)
        if let stored = try storedSeed(level: level, day: day) { return stored }
        try connection.execute("""
            INSERT INTO daily_roads (day, level, seed, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (day, level) DO NOTHING
            """, [day.text, level.rawValue, Int64(bitPattern: UTCDay.newSeed()), UTCCivilTime.text(now)])
        guard let seed = try storedSeed(level: level, day: day) else {
            throw StoreError.unreadable("daily_roads lost the row for \(level.rawValue) \(day) just written")
        }
        return seed
    }

    public func storedSeed(level: SpeedLevel, day: UTCDay) throws -> UInt64? {
        try Self.storedSeed(connection, level: level, day: day)
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
        try connection.transaction(.repeatableRead) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: db)
            guard let row = try db.execute("""
                SELECT a.game_id, a.started_at, g.score FROM daily_attempts a LEFT JOIN games g ON g.public_id = a.game_id
                WHERE a.player_id = $1 AND a.level = $2 AND a.day = $3
                """, [playerID, level.rawValue, day.text]).first else { return nil }
            let score = row.isNull(at: 2) ? nil : row.int(at: 2)
            var rank: Int?
            if score != nil, let best = try PostgresLeaderboardRepository.best(db, Self.board(level, day), playerID: playerID) {
                rank = try PostgresLeaderboardRepository.rank(db, Self.board(level, day), of: best.position)
            }
            return DailyAttempt(gameID: row.string(at: 0),
                                startedAt: try UTCCivilTime.storedDate(row.string(at: 1), column: "daily_attempts.started_at"),
                                score: score, rank: rank)
        }
    }

    // MARK: - Shared with the games and running games (inside their transactions)

    static func board(_ level: SpeedLevel, _ day: UTCDay) -> PostgresLeaderboardRepository.Board {
        PostgresLeaderboardRepository.Board(level: level, period: .today, key: day.boardKey)
    }

    static func storedSeed(_ db: PostgresConnection, level: SpeedLevel, day: UTCDay) throws -> UInt64? {
        try db.execute("SELECT seed FROM daily_roads WHERE day = $1 AND level = $2", [day.text, level.rawValue])
            .first.map { UInt64(bitPattern: $0.int64(at: 0)) }
    }

    /// A daily game runs on its day's stored road: `.invalid` for another seed, or a day whose
    /// road was never made.
    static func requireDailySeed(_ game: RunningGameStart, day: UTCDay, _ db: PostgresConnection) throws {
        guard let seed = try storedSeed(db, level: game.level, day: day), seed == game.seed else {
            throw StoreError(.invalid, "is not the seed of the \(game.level.rawValue) daily road of \(day)", field: "seed")
        }
    }

    /// Takes the player's one scored attempt at the day's road for `game`, or throws
    /// ``DailyRoadPlayedError`` (the caller's transaction rolls back: nothing is consumed).
    static func takeAttempt(_ game: RunningGameStart, day: UTCDay, _ db: PostgresConnection) throws {
        let taken = try db.execute("""
            INSERT INTO daily_attempts (player_id, level, day, game_id, started_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (player_id, level, day) DO NOTHING
            """, [game.playerID, game.level.rawValue, day.text, game.publicID, UTCCivilTime.text(game.startedAt)]).affectedRows
        guard taken == 0 else { return }
        let earlier = try db.execute("SELECT game_id FROM daily_attempts WHERE player_id = $1 AND level = $2 AND day = $3",
                                     [game.playerID, game.level.rawValue, day.text]).first?.string(at: 0)
        throw DailyRoadPlayedError(level: game.level, day: day, gameID: earlier ?? "")
    }
}
