import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// Leaderboards per speed level for today (UTC), this ISO week and all time: the rules and
/// queries of `SQLiteLeaderboardRepository`, over the same tables and indexes.
///
/// - A page is a seek into `best_scores_ranking (level, period, period_key, score DESC,
///   achieved_at, player_id)`, which is the ranking order, and a short walk (keyset paging
///   with ``LeaderboardCursor``, never OFFSET).
/// - A rank is 1 + the players on higher scores, summed from `score_counts` (kept by the
///   schema's trigger on `best_scores`), + those who reached the same score earlier, counted
///   in `best_scores_ranking`.
/// - Pages are put together by ``LeaderboardPage`` and ``LeaderboardNeighbourhood`` from
///   ``LeaderboardLine``s, as SQLite's are.
/// - Every read runs in one REPEATABLE READ transaction (read-only, so it never fails to
///   serialise): a page's ranks, entries and total come from one snapshot, however many nodes
///   record games meanwhile. The writes are `GameRepository.record`'s (``offer(_:_:playerID:score:achievedAt:gameID:)``).
///
/// Like its ``PostgresConnection``, a repository is used from one thread at a time (a storage thread).
public struct PostgresLeaderboardRepository: LeaderboardRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// The best `limit` entries of a board, or the `limit` after `cursor` (of the same level
    /// and period, or it is refused as invalid); without a cursor, the board containing `now`.
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
        try connection.transaction(.repeatableRead) { db in
            try LeaderboardPage.read(Reads(db: db, board: board), level: board.level, period: board.period,
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
        try connection.transaction(.repeatableRead) { db in
            try LeaderboardNeighbourhood.read(Reads(db: db, board: board), playerID: playerID, level: board.level,
                                              period: board.period, periodKey: board.key, neighbours: neighbours, now: now, daily: daily)
        }
    }

    /// One board's reads (and a scored game's offer to it) in PostgreSQL's SQL, for the page and neighbourhood written once.
    struct Reads: LeaderboardOffers {
        let db: PostgresConnection
        let board: Board

        func lines(after position: Position?, limit: Int) throws -> [LeaderboardLine] {
            try PostgresLeaderboardRepository.rows(db, board, after: position, limit: limit)
        }
        func lines(before position: Position, limit: Int) throws -> [LeaderboardLine] {
            try PostgresLeaderboardRepository.rows(db, board, before: position, limit: limit)
        }
        func rank(of position: Position) throws -> Int { try PostgresLeaderboardRepository.rank(db, board, of: position) }
        func best(playerID: Int64) throws -> LeaderboardLine? { try PostgresLeaderboardRepository.best(db, board, playerID: playerID) }
        func withGameIDs(_ lines: [LeaderboardLine]) throws -> [LeaderboardLine] {
            try PostgresLeaderboardRepository.withGameIDs(db, board, lines)
        }
        func total() throws -> Int { try PostgresLeaderboardRepository.total(db, board) }
        func offer(playerID: Int64, score: Int, achievedAt: String, gameID: Int64) throws -> Bool {
            try PostgresLeaderboardRepository.offer(db, board, playerID: playerID, score: score, achievedAt: achievedAt, gameID: gameID)
        }
        func requirePlayer(_ playerID: Int64) throws { try SQLPlayerLookup.requirePlayer(playerID, in: db) }
    }

    // MARK: - Shared with PostgresGameRepository (inside its transaction)

    struct Board {
        var level: SpeedLevel
        var period: LeaderboardPeriod
        var key: String

        var values: [any PostgresBindable] { [level.rawValue, period.storageName, key] }
    }

    static let columns = "b.player_id, p.public_id, p.display_name, b.score, b.achieved_at"

    static func line(_ row: PostgresRow) -> LeaderboardLine {
        LeaderboardLine(playerID: row.int64(at: 0), publicID: row.string(at: 1), displayName: row.string(at: 2),
                        score: row.int(at: 3), achievedAt: row.string(at: 4))
    }

    /// `lines` with the public id of the game that holds each one's best: one look-up by the
    /// primary key for the page, kept out of the ranking queries so they read their index only.
    static func withGameIDs(_ db: PostgresConnection, _ board: Board, _ lines: [LeaderboardLine]) throws -> [LeaderboardLine] {
        guard !lines.isEmpty else { return lines }
        let players = "{" + lines.map { String($0.playerID) }.joined(separator: ",") + "}"
        let rows = try db.execute("""
            SELECT b.player_id, g.public_id
            FROM best_scores b JOIN games g ON g.id = b.game_id
            WHERE b.player_id = ANY ($4::bigint[]) AND b.level = $1 AND b.period = $2 AND b.period_key = $3
            """, board.values + [players])
        var ids: [Int64: String] = [:]
        for row in rows.map({ $0 }) {
            if let gameID = row.optionalString(at: 1) { ids[row.int64(at: 0)] = gameID }
        }
        return lines.map { line in
            var named = line
            named.gameID = ids[line.playerID]
            return named
        }
    }

    /// Keeps `score` as the player's best on `board` unless the stored best is at least as
    /// high (an equal score keeps its earlier time). True when it became the best. Atomic on
    /// its own: the conflict locks the stored best and the WHERE is checked on its newest version.
    static func offer(
        _ db: PostgresConnection, _ board: Board, playerID: Int64, score: Int, achievedAt: String, gameID: Int64
    ) throws -> Bool {
        try !db.execute("""
            INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (player_id, level, period, period_key) DO UPDATE
                SET score = excluded.score, achieved_at = excluded.achieved_at, game_id = excluded.game_id
                WHERE excluded.score > best_scores.score
            RETURNING 1
            """, board.values + [playerID, score, achievedAt, gameID]).isEmpty
    }

    /// The player's line on `board`, if they have one.
    static func best(_ db: PostgresConnection, _ board: Board, playerID: Int64) throws -> LeaderboardLine? {
        try db.execute("""
            SELECT \(columns)
            FROM best_scores b JOIN players p ON p.id = b.player_id
            WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3 AND b.player_id = $4
            """, board.values + [playerID]).map(line).first
    }

    /// 1 + the number of entries ranked ahead of `position` (``rankSQL``).
    static func rank(_ db: PostgresConnection, _ board: Board, of position: (score: Int, achievedAt: String, playerID: Int64)) throws -> Int {
        let ahead = try db.execute(rankSQL, board.values + [position.score, position.achievedAt, position.playerID])
        return (ahead.first?.int(at: 0) ?? 0) + 1
    }

    /// Up to `limit` lines after `position` in ranking order (from the top when nil).
    static func rows(
        _ db: PostgresConnection, _ board: Board, after position: (score: Int, achievedAt: String, playerID: Int64)?, limit: Int
    ) throws -> [LeaderboardLine] {
        guard let position else {
            return try db.execute(firstPageSQL, board.values + [limit]).map(line)
        }
        return try db.execute(pageAfterSQL, board.values + [position.score, position.achievedAt, position.playerID, limit]).map(line)
    }

    /// Up to `limit` lines before `position`, nearest first (the reverse of ranking order).
    static func rows(
        _ db: PostgresConnection, _ board: Board, before position: (score: Int, achievedAt: String, playerID: Int64), limit: Int
    ) throws -> [LeaderboardLine] {
        guard limit > 0 else { return [] }
        return try db.execute(pageBeforeSQL, board.values + [position.score, position.achievedAt, position.playerID, limit]).map(line)
    }

    static func total(_ db: PostgresConnection, _ board: Board) throws -> Int {
        try db.execute(totalSQL, board.values).first?.int(at: 0) ?? 0
    }

    // The ranking queries, SQLite's with `$n` for `?n`: $1 level, $2 period, $3 period key; then
    // the position ($4 score, $5 achieved_at, $6 player id) and $7 the limit. The plans
    // (PostgresLeaderboardPlanTests) walk `best_scores_ranking` and `score_counts_covering`.

    /// How many entries rank ahead of a position: the players on higher scores, summed from
    /// `score_counts`, plus those on the same score who reached it earlier.
    static let rankSQL = """
        SELECT
            coalesce((SELECT sum(players) FROM score_counts
                      WHERE level = $1 AND period = $2 AND period_key = $3 AND score > $4), 0)
          + (SELECT count(*) FROM best_scores
             WHERE level = $1 AND period = $2 AND period_key = $3 AND score = $4
               AND (achieved_at, player_id) < ($5, $6))
        """

    /// How many players are on a board.
    static let totalSQL = """
        SELECT coalesce(sum(players), 0) FROM score_counts WHERE level = $1 AND period = $2 AND period_key = $3
        """

    /// The first `$4` entries.
    static let firstPageSQL = """
        SELECT \(columns)
        FROM best_scores b JOIN players p ON p.id = b.player_id
        WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3
        ORDER BY b.score DESC, b.achieved_at, b.player_id
        LIMIT $4
        """

    /// Entries after a position, in ranking order; `score <= $4` bounds the index scan.
    static let pageAfterSQL = """
        SELECT \(columns)
        FROM best_scores b JOIN players p ON p.id = b.player_id
        WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3 AND b.score <= $4
          AND (b.score < $4 OR (b.achieved_at, b.player_id) > ($5, $6))
        ORDER BY b.score DESC, b.achieved_at, b.player_id
        LIMIT $7
        """

    /// Entries before a position, nearest first: the index walked backwards.
    static let pageBeforeSQL = """
        SELECT \(columns)
        FROM best_scores b JOIN players p ON p.id = b.player_id
        WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3 AND b.score >= $4
          AND (b.score > $4 OR (b.achieved_at, b.player_id) < ($5, $6))
        ORDER BY b.score ASC, b.achieved_at DESC, b.player_id DESC
        LIMIT $7
        """
}
