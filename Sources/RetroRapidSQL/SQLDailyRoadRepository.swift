import Foundation
import RetroRapidDomain
import RetroRapidRules

/// The daily roads (`daily_roads`) and their boards.
///
/// - **One seed per day and level.** Each asker draws a seed and offers it with
///   `INSERT … ON CONFLICT (day, level) DO NOTHING`, then reads the row back in a new statement
///   of the same write transaction. SQLite: the transaction holds the one write lock, so the
///   first asker stores its seed and everyone after reads that row. PostgreSQL (READ COMMITTED):
///   of askers at once one inserts; the others wait on its uncommitted key, then insert nothing,
///   and their read (a fresh snapshot per statement) sees the committed winner.
/// - **One scored attempt per player per day per level.** ``takeAttempt(_:day:_:)`` inserts the
///   `daily_attempts` row `ON CONFLICT DO NOTHING` inside `RunningGameRepository.begin`'s
///   transaction, under the player's row lock: a second start finds the first's row (or waits
///   for it to commit) and is refused with ``DailyRoadPlayedError``; its transaction rolls back,
///   so no play is consumed.
/// - The board is `best_scores` rows under the key ``UTCDay/boardKey`` (`daily:2026-12-01`,
///   period `day`), written by `GameRepository.record` for scored daily games, and read with
///   ``SQLLeaderboardRepository``'s queries: the same ranks, ties and cursors.
///
/// Threading rule: as its executor, one thread at a time (a storage thread).
public struct SQLDailyRoadRepository: DailyRoadRepository {
    public let executor: any SQLExecutor
    let leaderboards: SQLLeaderboardRepository

    public init(executor: any SQLExecutor) {
        self.executor = executor
        self.leaderboards = SQLLeaderboardRepository(executor: executor)
    }

    public func seed(level: SpeedLevel, day: UTCDay, now: Date) throws -> UInt64 {
        let day = try day.validatedNotAfterToday(now: now)
        if let stored = try storedSeed(level: level, day: day) { return stored }
        return try executor.writeTransaction {
            try executor.query("""
                INSERT INTO daily_roads (day, level, seed, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (day, level) DO NOTHING
                """, [day.text, level.rawValue, Int64(bitPattern: UTCDay.newSeed()), UTCCivilTime.text(now)])
            guard let seed = try Self.storedSeed(executor, level: level, day: day) else {
                throw StoreError.unreadable("daily_roads lost the row for \(level.rawValue) \(day) just written")
            }
            return seed
        }
    }

    public func storedSeed(level: SpeedLevel, day: UTCDay) throws -> UInt64? {
        try Self.storedSeed(executor, level: level, day: day)
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
        try executor.readTransaction {
            try SQLPlayerLookup.requirePlayer(playerID, in: executor)
            guard let row = try executor.query("""
                SELECT a.game_id, a.started_at, g.score FROM daily_attempts a LEFT JOIN games g ON g.public_id = a.game_id
                WHERE a.player_id = $1 AND a.level = $2 AND a.day = $3
                """, [playerID, level.rawValue, day.text]).first else { return nil }
            let score = try row.isNull("score") ? nil : row.int("score")
            var rank: Int?
            let board = SQLLeaderboardRepository.Reads(db: executor, board: Self.board(level, day))
            if score != nil, let best = try board.best(playerID: playerID) {
                rank = try board.rank(of: best.position)
            }
            return DailyAttempt(gameID: try row.string("game_id"),
                                startedAt: try UTCCivilTime.storedDate(row.string("started_at"), column: "daily_attempts.started_at"),
                                score: score, rank: rank)
        }
    }

    // MARK: - Shared with the running games (inside begin's transaction)

    static func board(_ level: SpeedLevel, _ day: UTCDay) -> SQLLeaderboardRepository.Board {
        SQLLeaderboardRepository.Board(level: level, period: .today, key: day.boardKey)
    }

    static func storedSeed(_ db: any SQLExecutor, level: SpeedLevel, day: UTCDay) throws -> UInt64? {
        try db.query("SELECT seed FROM daily_roads WHERE day = $1 AND level = $2", [day.text, level.rawValue])
            .first.map { UInt64(bitPattern: try $0.int64("seed")) }
    }

    /// A daily game runs on its day's stored road: `.invalid` for another seed, or a day whose
    /// road was never made (the server asks for the seed first).
    static func requireDailySeed(_ game: RunningGameStart, day: UTCDay, _ db: any SQLExecutor) throws {
        guard let seed = try storedSeed(db, level: game.level, day: day), seed == game.seed else {
            throw StoreError(.invalid, "is not the seed of the \(game.level.rawValue) daily road of \(day)", field: "seed")
        }
    }

    /// Takes the player's one scored attempt at the day's road for `game`, or throws
    /// ``DailyRoadPlayedError`` (and the caller's transaction rolls back: nothing is consumed).
    static func takeAttempt(_ game: RunningGameStart, day: UTCDay, _ db: any SQLExecutor) throws {
        let taken = try db.query("""
            INSERT INTO daily_attempts (player_id, level, day, game_id, started_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (player_id, level, day) DO NOTHING
            """, [game.playerID, game.level.rawValue, day.text, game.publicID, UTCCivilTime.text(game.startedAt)]).affectedRows
        guard taken == 0 else { return }
        let earlier = try db.query("SELECT game_id FROM daily_attempts WHERE player_id = $1 AND level = $2 AND day = $3",
                                   [game.playerID, game.level.rawValue, day.text]).first
        throw DailyRoadPlayedError(level: game.level, day: day, gameID: try earlier?.string("game_id") ?? "")
    }
}
