import Foundation
import RetroRapidDomain
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
///   (how many players hold each score on each board, kept exact by the schema's triggers on
///   `best_scores`), plus a COUNT on the index of those who reached the same score earlier. A
///   plain COUNT of every entry ahead was measured first and costs time in proportion to the
///   rank (about 40 ms for a middle rank of a million, against 1 ms); docs/BENCHMARKS.md has both.
/// - Pages and neighbourhoods are put together once, by ``LeaderboardPage`` and
///   ``LeaderboardNeighbourhood``, from this board's reads (``Reads``).
///
/// Every read runs in one read transaction (SQLite: DEFERRED; PostgreSQL: REPEATABLE READ), so
/// a page's ranks, entries and total agree however many games are recorded meanwhile.
/// Both backends' plan tests check the queries walk their indexes.
///
/// Threading rule: as its executor, one thread at a time (a storage thread).
public struct SQLLeaderboardRepository: LeaderboardRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
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
        try executor.readTransaction {
            try LeaderboardPage.read(Reads(db: executor, board: board), level: board.level, period: board.period,
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
        try executor.readTransaction {
            try LeaderboardNeighbourhood.read(Reads(db: executor, board: board), playerID: playerID, level: board.level,
                                              period: board.period, periodKey: board.key, neighbours: neighbours, now: now, daily: daily)
        }
    }

    /// One board: its level, period and period key.
    struct Board {
        var level: SpeedLevel
        var period: LeaderboardPeriod
        var key: String

        var values: [any SQLBindable] { [level.rawValue, period.storageName, key] }
    }

    /// One board's reads, and a scored game's offer to it (inside `GameRepository.record`'s
    /// transaction), for the page, neighbourhood and standings written once in the domain.
    struct Reads: LeaderboardOffers {
        let db: any SQLExecutor
        let board: Board

        func lines(after position: Position?, limit: Int) throws -> [LeaderboardLine] {
            guard let position else {
                return try db.query(SQLLeaderboardRepository.firstPageSQL(db.dialect), board.values + [limit]).rows.map(line)
            }
            return try db.query(SQLLeaderboardRepository.pageAfterSQL(db.dialect),
                                board.values + [position.score, position.achievedAt, position.playerID, limit]).rows.map(line)
        }

        func lines(before position: Position, limit: Int) throws -> [LeaderboardLine] {
            guard limit > 0 else { return [] }
            return try db.query(SQLLeaderboardRepository.pageBeforeSQL(db.dialect),
                                board.values + [position.score, position.achievedAt, position.playerID, limit]).rows.map(line)
        }

        /// 1 + the number of entries ranked ahead of `position`: a higher score, or the same
        /// score achieved earlier, or at the same second by a lower player id.
        func rank(of position: Position) throws -> Int {
            let ahead = try db.query(SQLLeaderboardRepository.rankSQL,
                                     board.values + [position.score, position.achievedAt, position.playerID])
            return try Self.count(ahead.first, "ahead") + 1
        }

        func best(playerID: Int64) throws -> LeaderboardLine? {
            try db.query("""
                SELECT \(SQLLeaderboardRepository.columns)
                FROM best_scores b \(db.dialect.joinKeepingOrder) players p ON p.id = b.player_id
                WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3 AND b.player_id = $4
                """, board.values + [playerID]).first.map(line)
        }

        /// `lines` with the public id of the game that holds each one's best: one look-up by the
        /// primary key for the page, kept out of the ranking queries so they read their index only.
        func withGameIDs(_ lines: [LeaderboardLine]) throws -> [LeaderboardLine] {
            guard !lines.isEmpty else { return lines }
            let players = db.dialect.textList(lines.map { String($0.playerID) })
            // SQLite: from the list of players, so each is a seek by key; PostgreSQL plans it itself.
            let sql: String
            switch db.dialect {
            case .sqlite:
                sql = """
                    SELECT b.player_id, g.public_id
                    FROM json_each($4) AS j CROSS JOIN best_scores b CROSS JOIN games g
                    WHERE b.player_id = CAST(j.value AS INTEGER) AND b.level = $1 AND b.period = $2 AND b.period_key = $3
                      AND g.id = b.game_id
                    """
            case .postgresql:
                sql = """
                    SELECT b.player_id, g.public_id
                    FROM best_scores b JOIN games g ON g.id = b.game_id
                    WHERE b.player_id = ANY ($4::bigint[]) AND b.level = $1 AND b.period = $2 AND b.period_key = $3
                    """
            }
            var ids: [Int64: String] = [:]
            for row in try db.query(sql, board.values + [players]).rows {
                if let gameID = try row.optionalString("public_id") { ids[try row.int64("player_id")] = gameID }
            }
            return lines.map { line in
                var named = line
                named.gameID = ids[line.playerID]
                return named
            }
        }

        /// How many players are on the board.
        func total() throws -> Int {
            try Self.count(db.query(SQLLeaderboardRepository.totalSQL, board.values).first, "players")
        }

        /// A count of players read from the database (a sum over `score_counts`), checked before
        /// ranks are made from it by adding: more than a trillion players is damage, not a board.
        static func count(_ row: SQLRow?, _ column: String) throws -> Int {
            guard let row else { return 0 }
            let count = try row.int(column)
            guard (0...maximumPlayers).contains(count) else {
                throw StoreError.unreadable("a leaderboard count of \(count) players (column \(column)) is out of range")
            }
            return count
        }

        static let maximumPlayers = 1_000_000_000_000

        /// Keeps `score` as the player's best on the board unless the stored best is at least as
        /// high (an equal score keeps its earlier time). True when it became the best. Atomic on
        /// its own: on PostgreSQL the conflict locks the stored best and the WHERE is checked on
        /// its newest version, so of two games of one player recorded at once the higher stays.
        func offer(playerID: Int64, score: Int, achievedAt: String, gameID: Int64) throws -> Bool {
            try !db.query("""
                INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (level, period, period_key, player_id) DO UPDATE
                    SET score = excluded.score, achieved_at = excluded.achieved_at, game_id = excluded.game_id
                    WHERE excluded.score > best_scores.score
                RETURNING 1 AS stored
                """, board.values + [playerID, score, achievedAt, gameID]).isEmpty
        }

        func requirePlayer(_ playerID: Int64) throws { try SQLPlayerLookup.requirePlayer(playerID, in: db) }

        private func line(_ row: SQLRow) throws -> LeaderboardLine {
            LeaderboardLine(playerID: try row.int64("player_id"), publicID: try row.string("public_id"),
                            displayName: try row.string("display_name"), score: try row.int("score"),
                            achievedAt: try row.string("achieved_at"))
        }
    }

    static let columns = "b.player_id, p.public_id, p.display_name, b.score, b.achieved_at"

    // The ranking queries. Parameters: $1 level, $2 period, $3 period key; then the position
    // ($4 score, $5 achieved_at, $6 player id) and $7 the limit. Each walks
    // `best_scores_ranking` and looks players up by id (the plan tests of each backend check).

    /// How many entries rank ahead of a position: the players on higher scores, summed from
    /// `score_counts` (one row per distinct score), plus those on the same score who reached it
    /// earlier, counted in `best_scores_ranking`. Neither part grows with the rank itself.
    static let rankSQL = """
        SELECT
            coalesce((SELECT sum(players) FROM score_counts
                      WHERE level = $1 AND period = $2 AND period_key = $3 AND score > $4), 0)
          + (SELECT count(*) FROM best_scores
             WHERE level = $1 AND period = $2 AND period_key = $3 AND score = $4
               AND (achieved_at, player_id) < ($5, $6)) AS ahead
        """

    /// How many players are on a board.
    static let totalSQL = """
        SELECT coalesce(sum(players), 0) AS players FROM score_counts WHERE level = $1 AND period = $2 AND period_key = $3
        """

    /// The first `$4` entries.
    static func firstPageSQL(_ dialect: SQLDialect) -> String {
        """
        SELECT \(columns)
        FROM best_scores b \(dialect.joinKeepingOrder) players p ON p.id = b.player_id
        WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3
        ORDER BY b.score DESC, b.achieved_at, b.player_id
        LIMIT $4
        """
    }

    /// Entries after a position, in ranking order. `score <= $4` is implied by the rest but
    /// lets the planner seek to the position instead of walking from the top.
    static func pageAfterSQL(_ dialect: SQLDialect) -> String {
        """
        SELECT \(columns)
        FROM best_scores b \(dialect.joinKeepingOrder) players p ON p.id = b.player_id
        WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3 AND b.score <= $4
          AND (b.score < $4 OR (b.achieved_at, b.player_id) > ($5, $6))
        ORDER BY b.score DESC, b.achieved_at, b.player_id
        LIMIT $7
        """
    }

    /// Entries before a position, nearest first: the index walked backwards.
    static func pageBeforeSQL(_ dialect: SQLDialect) -> String {
        """
        SELECT \(columns)
        FROM best_scores b \(dialect.joinKeepingOrder) players p ON p.id = b.player_id
        WHERE b.level = $1 AND b.period = $2 AND b.period_key = $3 AND b.score >= $4
          AND (b.score > $4 OR (b.achieved_at, b.player_id) < ($5, $6))
        ORDER BY b.score ASC, b.achieved_at DESC, b.player_id DESC
        LIMIT $7
        """
    }
}
