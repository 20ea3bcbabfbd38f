import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// Leaderboards per speed level for today (UTC), this ISO week and all time (docs/API.md).
///
/// Table `best_scores` keeps each player's best per board, written by `GameRepository.record`
/// in the same transaction as the game. Reading walks the index
/// `best_scores_ranking (level, period, period_key, score DESC, achieved_at, player_id)`, which
/// is exactly the ranking order:
/// - a page is a seek into it and a short walk (keyset paging with ``LeaderboardCursor``, never
///   OFFSET), so pages cost the same at any depth and a score arriving between two pages
///   neither repeats nor skips an entry;
/// - a rank is 1 + the entries ahead: the players on higher scores, summed from `score_counts`
///   (how many players hold each score on each board, kept exact by triggers on `best_scores`),
///   plus a COUNT on the index of those who reached the same score earlier. A plain COUNT of
///   every entry ahead was measured first and costs time in proportion to the rank (about
///   40 ms for a middle rank of a million, against 1 ms); docs/BENCHMARKS.md has both.
///
/// Every read runs in one read transaction, so a page's ranks and entries agree. Like its
/// ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteLeaderboardRepository: LeaderboardRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }


    /// The best `limit` entries of a board, or the `limit` after `cursor`.
    ///
    /// Without a cursor the board is the one containing `now`; with one, the cursor's board
    /// (it must be for the same level and period, or it is refused as invalid).
    public func top(
        level: SpeedLevel, period: LeaderboardPeriod, limit: Int = 20,
        after cursor: LeaderboardCursor? = nil, now: Date
    ) throws -> LeaderboardPage {
        let limit = try LeaderboardPage.validatedSize(limit)
        let after = try LeaderboardPage.validatedPosition(cursor, level: level, period: period)
        let periodKey = after?.periodKey ?? period.key(containing: now)
        return try page(Board(level: level, period: period, key: periodKey), limit: limit, after: after, now: now)
    }

    /// A page of `board` (the body of ``top(level:period:limit:after:now:)``, and of the daily
    /// boards', which pass their day); `limit` and `after` already checked.
    func page(_ board: Board, limit: Int, after: LeaderboardCursor.Position?, now: Date, daily: UTCDay? = nil) throws -> LeaderboardPage {
        try database.transaction(.deferred) { _ in
            try LeaderboardPage.read(Reads(db: statements, board: board), level: board.level, period: board.period,
                                     periodKey: board.key, limit: limit, after: after, now: now, daily: daily)
        }
    }

    /// The player's own rank on the board containing `now`, with up to `neighbours` entries
    /// above and below. Nil when the player has no score on that board yet; an unknown player
    /// is `StoreError.notFound`.
    public func aroundMe(
        playerID: Int64, level: SpeedLevel, period: LeaderboardPeriod, neighbours: Int = 5, now: Date
    ) throws -> LeaderboardNeighbourhood? {
        let neighbours = try LeaderboardNeighbourhood.validatedNeighbours(neighbours)
        return try neighbourhood(playerID: playerID, board: Board(level: level, period: period, key: period.key(containing: now)),
                                 neighbours: neighbours, now: now)
    }

    /// The body of ``aroundMe(playerID:level:period:neighbours:now:)`` for any board; `neighbours` already checked.
    func neighbourhood(playerID: Int64, board: Board, neighbours: Int, now: Date, daily: UTCDay? = nil) throws -> LeaderboardNeighbourhood? {
        try database.transaction(.deferred) { _ in
            try LeaderboardNeighbourhood.read(Reads(db: statements, board: board), playerID: playerID, level: board.level,
                                              period: board.period, periodKey: board.key, neighbours: neighbours, now: now, daily: daily)
        }
    }

    /// One board's reads (and a scored game's offer to it) in SQLite's SQL, for the page and neighbourhood written once.
    struct Reads: LeaderboardOffers {
        let db: SQLiteExecutor
        let board: Board

        func lines(after position: Position?, limit: Int) throws -> [LeaderboardLine] {
            try SQLiteLeaderboardRepository.rows(db, board, after: position, limit: limit)
        }
        func lines(before position: Position, limit: Int) throws -> [LeaderboardLine] {
            try SQLiteLeaderboardRepository.rows(db, board, before: position, limit: limit)
        }
        func rank(of position: Position) throws -> Int { try SQLiteLeaderboardRepository.rank(db, board, of: position) }
        func best(playerID: Int64) throws -> LeaderboardLine? { try SQLiteLeaderboardRepository.best(db, board, playerID: playerID) }
        func withGameIDs(_ lines: [LeaderboardLine]) throws -> [LeaderboardLine] {
            try SQLiteLeaderboardRepository.withGameIDs(db, board, lines)
        }
        func total() throws -> Int { try SQLiteLeaderboardRepository.total(db, board) }
        func offer(playerID: Int64, score: Int, achievedAt: String, gameID: Int64) throws -> Bool {
            try SQLiteLeaderboardRepository.offer(db, board, playerID: playerID, score: score, achievedAt: achievedAt, gameID: gameID)
        }
        func requirePlayer(_ playerID: Int64) throws { try SQLPlayerLookup.requirePlayer(playerID, in: db) }
    }

    // MARK: - Shared with GameRepository (inside its transaction)

    struct Board {
        var level: SpeedLevel
        var period: LeaderboardPeriod
        var key: String

        var values: [any DatabaseValueConvertible] { [level.rawValue, period.storageName, key] }
    }

    static let columns = "b.player_id, p.public_id, p.display_name, b.score, b.achieved_at"

    static func row(_ statement: Statement) -> LeaderboardLine {
        LeaderboardLine(playerID: statement.int64(at: 0), publicID: statement.string(at: 1), displayName: statement.string(at: 2),
            score: statement.int(at: 3), achievedAt: statement.string(at: 4))
    }

    /// `lines` with the public id of the game that holds each one's best: one look-up by the
    /// primary key for the page, kept out of the ranking queries so they read their index only.
    static func withGameIDs(_ db: SQLiteExecutor, _ board: Board, _ lines: [LeaderboardLine]) throws -> [LeaderboardLine] {
        guard !lines.isEmpty else { return lines }
        let players = "[" + lines.map { String($0.playerID) }.joined(separator: ",") + "]"
        let pairs = try db.prepare("""
            SELECT b.player_id, g.public_id
            FROM json_each(?4) AS j CROSS JOIN best_scores b CROSS JOIN games g
            WHERE b.player_id = j.value AND b.level = ?1 AND b.period = ?2 AND b.period_key = ?3 AND g.id = b.game_id
            """).query(board.values + [players]) { ($0.int64(at: 0), $0.isNull(at: 1) ? nil : $0.string(at: 1)) }
        let ids = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        return lines.map { line in
            var named = line
            named.gameID = ids[line.playerID] ?? nil
            return named
        }
    }

    /// Keeps `score` as the player's best on `board` unless the stored best is at least as
    /// high (an equal score keeps its earlier time). True when it became the best.
    static func offer(
        _ db: SQLiteExecutor, _ board: Board, playerID: Int64, score: Int, achievedAt: String, gameID: Int64
    ) throws -> Bool {
        let stored = try db.prepare("""
            INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (level, period, period_key, player_id) DO UPDATE
                SET score = excluded.score, achieved_at = excluded.achieved_at, game_id = excluded.game_id
                WHERE excluded.score > best_scores.score
            RETURNING 1
            """).query(board.values + [playerID, score, achievedAt, gameID]) { _ in true }
        return !stored.isEmpty
    }

    /// The player's line on `board`, if they have one.
    static func best(_ db: SQLiteExecutor, _ board: Board, playerID: Int64) throws -> LeaderboardLine? {
        try db.prepare("""
            SELECT \(columns)
            FROM best_scores b CROSS JOIN players p ON p.id = b.player_id
            WHERE b.level = ? AND b.period = ? AND b.period_key = ? AND b.player_id = ?
            """).query(board.values + [playerID], row).first
    }

    /// 1 + the number of entries ranked ahead of `position`: a higher score, or the same
    /// score achieved earlier, or at the same second by a lower player id (``rankSQL``).
    static func rank(_ db: SQLiteExecutor, _ board: Board, of position: (score: Int, achievedAt: String, playerID: Int64)) throws -> Int {
        let ahead = try db.prepare(rankSQL)
            .query(board.values + [position.score, position.achievedAt, position.playerID]) { $0.int(at: 0) }
        return (ahead.first ?? 0) + 1
    }

    /// Up to `limit` lines after `position` in ranking order (from the top when nil).
    static func rows(
        _ db: SQLiteExecutor, _ board: Board, after position: (score: Int, achievedAt: String, playerID: Int64)?, limit: Int
    ) throws -> [LeaderboardLine] {
        guard let position else {
            return try db.prepare(firstPageSQL).query(board.values + [limit], row)
        }
        return try db.prepare(pageAfterSQL)
            .query(board.values + [position.score, position.achievedAt, position.playerID, limit], row)
    }

    /// Up to `limit` lines before `position`, nearest first (the reverse of ranking order).
    static func rows(
        _ db: SQLiteExecutor, _ board: Board, before position: (score: Int, achievedAt: String, playerID: Int64), limit: Int
    ) throws -> [LeaderboardLine] {
        guard limit > 0 else { return [] }
        return try db.prepare(pageBeforeSQL)
            .query(board.values + [position.score, position.achievedAt, position.playerID, limit], row)
    }

    // The ranking queries. Parameters: ?1 level, ?2 period, ?3 period key; then the position
    // (?4 score, ?5 achieved_at, ?6 player id) and ?7 the limit. CROSS JOIN keeps best_scores
    // the outer loop, so each walks `best_scores_ranking` and looks players up by id.

    /// How many entries rank ahead of a position: the players on higher scores, summed from
    /// `score_counts` (one row per distinct score), plus those on the same score who reached it
    /// earlier, counted in `best_scores_ranking`. Neither part grows with the rank itself.
    static let rankSQL = """
        SELECT
            coalesce((SELECT sum(players) FROM score_counts
                      WHERE level = ?1 AND period = ?2 AND period_key = ?3 AND score > ?4), 0)
          + (SELECT count(*) FROM best_scores
             WHERE level = ?1 AND period = ?2 AND period_key = ?3 AND score = ?4
               AND (achieved_at, player_id) < (?5, ?6))
        """

    /// How many players are on a board.
    static let totalSQL = """
        SELECT coalesce(sum(players), 0) FROM score_counts WHERE level = ?1 AND period = ?2 AND period_key = ?3
        """

    /// The first `?4` entries.
    static let firstPageSQL = """
        SELECT \(columns)
        FROM best_scores b CROSS JOIN players p ON p.id = b.player_id
        WHERE b.level = ?1 AND b.period = ?2 AND b.period_key = ?3
        ORDER BY b.score DESC, b.achieved_at, b.player_id
        LIMIT ?4
        """

    /// Entries after a position, in ranking order. `score <= ?4` is implied by the rest but
    /// lets SQLite seek to the position instead of walking from the top.
    static let pageAfterSQL = """
        SELECT \(columns)
        FROM best_scores b CROSS JOIN players p ON p.id = b.player_id
        WHERE b.level = ?1 AND b.period = ?2 AND b.period_key = ?3 AND b.score <= ?4
          AND (b.score < ?4 OR (b.achieved_at, b.player_id) > (?5, ?6))
        ORDER BY b.score DESC, b.achieved_at, b.player_id
        LIMIT ?7
        """

    /// Entries before a position, nearest first: the index walked backwards.
    static let pageBeforeSQL = """
        SELECT \(columns)
        FROM best_scores b CROSS JOIN players p ON p.id = b.player_id
        WHERE b.level = ?1 AND b.period = ?2 AND b.period_key = ?3 AND b.score >= ?4
          AND (b.score > ?4 OR (b.achieved_at, b.player_id) < (?5, ?6))
        ORDER BY b.score ASC, b.achieved_at DESC, b.player_id DESC
        LIMIT ?7
        """

    static func total(_ db: SQLiteExecutor, _ board: Board) throws -> Int {
        try db.prepare(totalSQL).query(board.values) { $0.int(at: 0) }.first ?? 0
    }
}
