import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// Games while they run (table `running_games`), so a crash of the server does not lose them:
/// the same rules as `SQLiteRunningGameRepository` (recovery itself is decided once, in
/// ``RunningGameRecovery``; the checkpoints are joined by ``CheckpointLog``).
///
/// How each rule stays exact with many connections and nodes (READ COMMITTED):
/// - ``begin(_:)`` consumes the play and inserts the row in one transaction, after locking the
///   player's row (`SQLQuotaRepository`): of any number of concurrent starts for a
///   player with one play left, exactly one commits a game. Practice takes the same lock, so
///   every start of a player is serialised on that row: a rule about the player's other
///   running games (SQLite's begin has none; one game at a time is the game host's, per
///   process) can be checked exactly in that transaction.
/// - ``cancel(publicID:)`` deletes the play and the row in one transaction.
/// - ``checkpoint(_:compacting:now:)`` appends a whole batch with one INSERT (arrays unnested)
///   in one transaction; compaction deletes only rows older than the batch whose game the
///   batch covers or which no longer run, so a game still running that the batch left out
///   (and, later, another node's games) keep theirs.
/// - ``recoverAll(now:)`` locks the rows it ends (`FOR UPDATE`), gives back plays, stores the
///   games and deletes their running rows and checkpoints in one transaction;
///   ``recover(publicID:now:)`` does the same for one game. Before it counts a player's
///   refunds of the day (the cap of `RunningGameRecovery`) it takes the player's row lock, as
///   every start of theirs does, so two recoveries of one player's games never both see the
///   cap unspent.
/// - The readers see one snapshot (REPEATABLE READ, read-only: never a serialization failure),
///   so a game and its checkpoints agree.
///
/// Like its ``PostgresConnection``, a repository is used from one thread at a time (a storage thread).
public struct PostgresRunningGameRepository: RunningGameRepository {
    public let connection: PostgresConnection
    public let quota: SQLQuotaRepository

    public init(connection: PostgresConnection, dailyFreePlays: Int = 5) {
        self.connection = connection
        self.quota = SQLQuotaRepository(executor: connection, dailyFreePlays: dailyFreePlays)
    }

    /// Records that `game` runs, with an empty log, and (unless it is practice) consumes one of
    /// the player's free plays for it, in one transaction.
    ///
    /// - Returns: the quota after the play, or nil for practice (which takes no play).
    /// - Throws: `QuotaExhaustedError` when no free play is left (nothing changes);
    ///   `StoreError(.notFound)` for an unknown player, `.invalid` for an empty public id.
    @discardableResult
    public func begin(_ game: RunningGameStart) throws -> QuotaStatus? {
        try game.validate()
        return try connection.transaction { db in
            var status: QuotaStatus?
            var freePlay = false
            if let day = game.road.day {
                // The player's row first, as every start of theirs takes it (the play below too).
                try SQLPlayerLookup.requirePlayer(game.playerID, in: db, lockingRow: true)
                try PostgresDailyRoadRepository.requireDailySeed(game, day: day, db)
                if !game.practice { try PostgresDailyRoadRepository.takeAttempt(game, day: day, db) }
            }
            if !game.practice {
                (status, freePlay) = try quota.consumePlayInTransaction(playerID: game.playerID, gameID: game.publicID, now: game.startedAt)
            } else {
                try SQLPlayerLookup.requirePlayer(game.playerID, in: db, lockingRow: true)
            }
            try db.execute("""
                INSERT INTO running_games (public_id, player_id, level, seed, rules_version, practice, free_play, started_at,
                                           road, daily_day)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                """, [
                    game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                    game.practice, freePlay, UTCCivilTime.text(game.startedAt), game.road.name, game.road.day?.text,
                ])
            return status
        }
    }

    /// A game that was begun but never ran: its row goes and its free play, if it took one,
    /// is given back. False when there was no such row.
    @discardableResult
    public func cancel(publicID: String) throws -> Bool {
        try connection.transaction { db in
            // The row first, locked and gone in one statement: a concurrent cancel or record of
            // the same game waits, then finds nothing, so the play is given back once.
            guard let row = try db.execute("DELETE FROM running_games WHERE public_id = $1 RETURNING player_id, free_play",
                                           [publicID]).first else { return false }
            if row.bool(at: 1) {
                try db.execute("DELETE FROM plays WHERE player_id = $1 AND game_id = $2", [row.int64(at: 0), publicID])
            }
            // A start that never ran was no daily attempt either.
            try db.execute("DELETE FROM daily_attempts WHERE game_id = $1", [publicID])
            return true
        }
    }

    /// Appends `batch` to the games' checkpoints: one INSERT of the whole batch, in one
    /// transaction whatever its size. A checkpoint whose `movesBefore` does not match what the
    /// game's earlier rows hold is the caller's mistake; the reader stops at it.
    ///
    /// - Parameter compacting: the batch holds a full log of every game the caller runs; then
    ///   every older row goes, but those of a game still in `running_games` that the batch
    ///   left out (or gave only a part of), so nothing recoverable is lost.
    public func checkpoint(_ batch: [GameCheckpoint], compacting: Bool = false, now: Date) throws {
        guard !batch.isEmpty || compacting else { return }
        let at = UTCCivilTime.text(now)
        try connection.transaction { db in
            // Identity values rise in insertion order, and this node's checkpoints are written one
            // batch at a time (CheckpointWriter), so every older row of its games is below `first`.
            var first: Int64
            if batch.isEmpty {
                first = try db.execute("SELECT coalesce(max(id), 0) + 1 FROM game_checkpoints").first?.int64(at: 0) ?? 1
            } else {
                first = try db.execute("""
                    WITH appended AS (
                        INSERT INTO game_checkpoints (public_id, steps, moves_before, moves, duration_ms, at)
                        SELECT public_id, steps, moves_before, moves, duration_ms, $6
                        FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[])
                            AS batch (public_id, steps, moves_before, moves, duration_ms)
                        RETURNING id)
                    SELECT min(id) FROM appended
                    """, [
                        Self.arrayLiteral(batch.map(\.publicID)),
                        Self.arrayLiteral(batch.map { String($0.steps) }),
                        Self.arrayLiteral(batch.map { String($0.movesBefore) }),
                        Self.arrayLiteral(batch.map { CheckpointLog.encode($0.moves) }),
                        Self.arrayLiteral(batch.map { String(max(0, $0.durationMilliseconds)) }),
                        at,
                    ]).first?.int64(at: 0) ?? 1
            }
            guard compacting else { return }
            try Self.deleteCompacted(before: first, covered: batch.lazy.filter { $0.movesBefore == 0 }.map(\.publicID), db)
        }
    }

    public func nextCheckpointRowID() throws -> Int64 {
        // Identity values are handed out in rising order, so a row appended after this read
        // gets a larger id than any row committed before it.
        try connection.transaction { db in
            try db.execute("SELECT coalesce(max(id), 0) + 1 FROM game_checkpoints").first?.int64(at: 0) ?? 1
        }
    }

    public func compactCheckpoints(before first: Int64, covered: Set<String>) throws {
        try connection.transaction { db in try Self.deleteCompacted(before: first, covered: covered, db) }
    }

    /// Every running game, oldest first, with its checkpoints joined.
    public func running() throws -> [RunningGameRecord] {
        try connection.transaction(.repeatableRead) { db in
            let rows = try db.execute("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id").map(Self.record)
            return try Self.withCheckpoints(rows, db).map(\.record)
        }
    }

    /// The player's running games.
    public func running(playerID: Int64) throws -> [RunningGameRecord] {
        try connection.transaction(.repeatableRead) { db in
            let rows = try db.execute("SELECT \(Self.columns) FROM running_games WHERE player_id = $1 ORDER BY started_at, public_id",
                                      [playerID]).map(Self.record)
            return try Self.withCheckpoints(rows, db).map(\.record)
        }
    }

    /// The running game with this public id, or nil.
    public func running(publicID: String) throws -> RunningGameRecord? {
        try connection.transaction(.repeatableRead) { db in
            let rows = try db.execute("SELECT \(Self.columns) FROM running_games WHERE public_id = $1", [publicID]).map(Self.record)
            return try Self.withCheckpoints(rows, db).first?.record
        }
    }

    /// Ends every game left running (``RunningGameRecovery``) and stores it in `games`, in one
    /// transaction, and clears their checkpoints. Returns what it stored, oldest start first.
    public func recoverAll(now: Date) throws -> [RecoveredGame] {
        try connection.transaction { db in
            // Locked: a concurrent record or cancel of one of these games waits for the outcome.
            let rows = try db.execute("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id FOR UPDATE")
                .map(Self.record)
            // One after another: each game's refund counts the ones stored before it.
            let recovered = try Self.withCheckpoints(rows, db).map { row, problem in
                try Self.store(RunningGameRecovery(row, problem: problem), db)
            }
            // Every checkpoint whose game no longer runs: here, all of them (SQLite deletes the table).
            try db.execute("""
                DELETE FROM game_checkpoints c WHERE NOT EXISTS (SELECT 1 FROM running_games r WHERE r.public_id = c.public_id)
                """)
            return recovered
        }
    }

    /// Ends the one game `publicID` by the same rules, in one transaction; nil when it no
    /// longer runs. Its checkpoints go with a later compaction, as a recorded game's do.
    public func recover(publicID: String, now: Date) throws -> RecoveredGame? {
        try connection.transaction { db in
            let rows = try db.execute("SELECT \(Self.columns) FROM running_games WHERE public_id = $1 FOR UPDATE", [publicID])
                .map(Self.record)
            return try Self.withCheckpoints(rows, db).first.map { row, problem in
                try Self.store(RunningGameRecovery(row, problem: problem), db)
            }
        }
    }

    // MARK: - Private

    /// Stores `recovery`'s game inside an open transaction, giving back its play when the
    /// player's refunds of that day are under the cap (counted under the player's row lock).
    private static func store(_ recovery: RunningGameRecovery, _ db: PostgresConnection) throws -> RecoveredGame {
        let row = recovery.record
        var refunded = false
        if recovery.mayGiveBackPlay {
            try SQLPlayerLookup.requirePlayer(row.playerID, in: db, lockingRow: true)
            let day = recovery.playDay
            let earlier = try db.execute("""
                SELECT count(*) FROM games WHERE player_id = $1 AND play_refunded AND started_at >= $2 AND started_at < $3
                """, [row.playerID, UTCCivilTime.text(day.start), UTCCivilTime.text(day.end)]).first?.int64(at: 0) ?? 0
            if try recovery.givesBackPlay(refundedThatDay: earlier) {
                refunded = try db.execute("DELETE FROM plays WHERE player_id = $1 AND game_id = $2",
                                          [row.playerID, row.publicID]).affectedRows == 1
            }
        }
        let game = try recovery.game(playRefunded: refunded)
        return RecoveredGame(recorded: try PostgresGameRepository.insert(game, db), problem: recovery.problem)
    }

    /// SQLite's rule ("older rows go, but a running game's the batch left out") said the other
    /// way round: a row below `first` goes when its game is covered or no longer runs.
    private static func deleteCompacted(before first: Int64, covered: some Sequence<String>,
                                        _ db: PostgresConnection) throws {
        try db.execute("""
            DELETE FROM game_checkpoints c
            WHERE c.id < $1
              AND (c.public_id = ANY ($2::text[])
                   OR NOT EXISTS (SELECT 1 FROM running_games r WHERE r.public_id = c.public_id))
            """, [first, arrayLiteral(Array(Set(covered)))])
    }

    private static let columns = "public_id, player_id, level, seed, rules_version, practice, free_play, started_at, road, daily_day"

    private static func record(_ row: PostgresRow) throws -> RunningGameRecord {
        let publicID = row.string(at: 0)
        guard let level = SpeedLevel(rawValue: row.string(at: 2)),
              let startedAt = UTCCivilTime.parse(row.string(at: 7)),
              let road = GameRoad(storedName: row.string(at: 8), day: row.optionalString(at: 9))
        else {
            throw StoreError.unreadable("running_games row \(publicID) holds a value this build cannot read")
        }
        return RunningGameRecord(
            publicID: publicID, playerID: row.int64(at: 1), level: level, seed: UInt64(bitPattern: row.int64(at: 3)),
            rulesVersion: row.int(at: 4), practice: row.bool(at: 5), freePlay: row.bool(at: 6), startedAt: startedAt,
            inputLog: "0:", durationMilliseconds: 0, checkpointedAt: startedAt, road: road)
    }

    /// `rows` with their checkpoints joined: the rows of these games only, through the index
    /// `game_checkpoints_by_game`, each game's in id order.
    private static func withCheckpoints(_ rows: [RunningGameRecord], _ db: PostgresConnection) throws -> [(record: RunningGameRecord, problem: String?)] {
        guard !rows.isEmpty else { return [] }
        var joined = Dictionary(uniqueKeysWithValues: rows.map { ($0.publicID, CheckpointLog()) })
        let checkpoints = try db.execute("""
            SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints
            WHERE public_id = ANY ($1::text[]) ORDER BY public_id, id
            """, [arrayLiteral(rows.map(\.publicID))])
        for checkpoint in checkpoints.map({ $0 }) {
            joined[checkpoint.string(at: 0)]?.append(
                steps: checkpoint.int(at: 1), movesBefore: checkpoint.int(at: 2), moves: checkpoint.string(at: 3),
                durationMilliseconds: checkpoint.int(at: 4), at: checkpoint.string(at: 5))
        }
        return rows.map { row in
            guard let log = joined[row.publicID] else { return (row, nil) }
            return (log.applied(to: row), log.problem)
        }
    }

    /// A PostgreSQL array literal of `values` (`{"a","b"}`), bound as one text parameter and
    /// cast in the SQL: a whole batch in one statement. Each element is quoted, with `"` and
    /// `\` escaped, so any text (a move list holds commas) stays one element.
    static func arrayLiteral(_ values: [String]) -> String {
        "{" + values.map { value in
            "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }
}
