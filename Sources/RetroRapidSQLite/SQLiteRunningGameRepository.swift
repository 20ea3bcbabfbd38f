import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// Games while they run (table `running_games`), so a crash of the server does not lose them.
///
/// The server calls ``begin(_:)`` when a game starts (the row and the play it
/// consumes in one transaction), ``checkpoint(_:compacting:now:)`` once an interval with what
/// changed in every game (one transaction for all of them, appended to `game_checkpoints`), and
/// `GameRepository.record` deletes the row in the transaction that stores the finished game.
/// So a row left when the server starts is a game it lost by dying; ``recoverAll(now:)`` ends
/// each one from its checkpoints:
///
/// - Re-simulated from seed, level and the checkpointed log (a game is a pure function of
///   them, `Replay`), stored in `games` as `server_crash` with the score and steps the replay
///   reaches, ended at the checkpoint's time. It counts on the leaderboards like an abandoned
///   or shutdown game (the points were earned), for the day and week of its last checkpoint.
/// - Its free play, if its start consumed one, is given back: the `plays` row is deleted, so
///   the day it was taken from counts one play fewer. A game started before UTC midnight and
///   recovered after it gives back a play of the day before, which changes nothing for today:
///   like any unused play, it does not carry over.
/// - At most `RunningGameRecovery.refundsPerPlayerPerDay` of a player's plays of one day are
///   given back so: the refunded `server_crash` games of that day are counted in the same
///   transaction that stores the game, so crashing the server again buys nothing. Beyond the
///   cap the game is stored the same, its play kept.
/// - A checkpoint whose replay had already crashed (the player's crash was waiting out the
///   grace window, or being saved, when the server died) is stored as the `crash` it is, and
///   keeps its play: the rules ended that game, not the server.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteRunningGameRepository: RunningGameRepository {
    public let database: Database
    public let quota: SQLQuotaRepository
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor
    let inserts: CheckpointInsertStatements

    public init(database: Database, dailyFreePlays: Int = 5, statements: SQLiteExecutor? = nil) {
        let statements = statements ?? SQLiteExecutor(database: database)
        self.database = database
        self.statements = statements
        self.quota = SQLQuotaRepository(executor: statements, dailyFreePlays: dailyFreePlays)
        self.inserts = CheckpointInsertStatements(database)
    }

    /// Records that `game` runs, with an empty log, and (unless it is practice) consumes one of
    /// the player's free plays for it, in one transaction: a game never runs without its play,
    /// nor is a play spent without a row that gives it back after a crash.
    ///
    /// - Returns: the quota after the play, or nil for practice (which takes no play).
    /// - Throws: `QuotaExhaustedError` when no free play is left (nothing changes);
    ///   `StoreError(.notFound)` for an unknown player, `.invalid` for an empty public id.
    @discardableResult
    public func begin(_ game: RunningGameStart) throws -> QuotaStatus? {
        try game.validate()
        return try database.transaction(.immediate) { db in
            var status: QuotaStatus?
            var freePlay = false
            if let day = game.road.day {
                try SQLPlayerLookup.requirePlayer(game.playerID, in: statements)
                try SQLiteDailyRoadRepository.requireDailySeed(game, day: day, statements)
                if !game.practice { try SQLiteDailyRoadRepository.takeAttempt(game, day: day, statements) }
            }
            if !game.practice {
                (status, freePlay) = try quota.consumePlayInTransaction(playerID: game.playerID, gameID: game.publicID, now: game.startedAt)
            } else {
                try SQLPlayerLookup.requirePlayer(game.playerID, in: statements)
            }
            try statements.prepare("""
                INSERT INTO running_games (public_id, player_id, level, seed, rules_version, practice, free_play, started_at,
                                           road, daily_day)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute([
                    game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                    game.practice, freePlay, UTCCivilTime.text(game.startedAt), game.road.name, game.road.day?.text,
                ])
            return status
        }
    }

    /// A game that was begun but never ran (the server began stopping before it started):
    /// its row goes and its free play, if it took one, is given back. False when there was no
    /// such row.
    @discardableResult
    public func cancel(publicID: String) throws -> Bool {
        try database.transaction(.immediate) { db in
            try statements.prepare("""
                DELETE FROM plays
                WHERE game_id = ?1 AND player_id = (SELECT player_id FROM running_games WHERE public_id = ?1 AND free_play = 1)
                """).execute([publicID])
            // A start that never ran was no daily attempt either.
            try statements.prepare("""
                DELETE FROM daily_attempts WHERE game_id = ?1 AND EXISTS (SELECT 1 FROM running_games WHERE public_id = ?1)
                """).execute([publicID])
            try statements.prepare("DELETE FROM running_games WHERE public_id = ?").execute([publicID])
            return db.changes == 1
        }
    }

    /// Appends `batch` to the games' checkpoints, in one transaction whatever its size (one
    /// commit, one fsync, a few pages appended), in INSERTs of up to ``rowsPerInsert`` rows.
    /// A checkpoint whose `movesBefore` does not match what the game's earlier rows hold is
    /// not lost data but a caller's mistake; the reader stops at it, so the game is recovered
    /// to the last consistent checkpoint.
    ///
    /// - Parameter compacting: the batch holds a full log (`movesBefore` 0) of every game the
    ///   caller runs; then every older row goes, but those of a game still in `running_games`
    ///   that the batch left out (one whose save failed), so nothing recoverable is lost.
    public func checkpoint(_ batch: [GameCheckpoint], compacting: Bool = false, now: Date) throws {
        guard !batch.isEmpty || compacting else { return }
        let at = UTCCivilTime.text(now)
        try database.transaction(.immediate) { _ in
            let first = compacting ? try nextCheckpointRowID() : 0
            var texts: [UInt8] = []
            var spans: [Range<Int>] = []
            var start = batch.startIndex
            while start < batch.endIndex {
                let rows = batch[start..<min(start + Self.rowsPerInsert, batch.endIndex)]
                try insertCheckpoints(rows, with: inserts.insert(rows: rows.count), at: at, texts: &texts, spans: &spans)
                start = rows.endIndex
            }
            guard compacting else { return }
            try deleteCompacted(before: first, covered: Set(batch.lazy.filter { $0.movesBefore == 0 }.map(\.publicID)))
        }
    }

    public func nextCheckpointRowID() throws -> Int64 {
        // The largest rowid of an INTEGER PRIMARY KEY is read from the end of the tree, not a scan.
        try statements.prepare("SELECT coalesce(max(id), 0) + 1 FROM game_checkpoints").query { $0.int64(at: 0) }.first ?? 1
    }

    public func compactCheckpoints(before first: Int64, covered: Set<String>) throws {
        try database.transaction(.immediate) { _ in try deleteCompacted(before: first, covered: covered) }
    }

    /// Every running game, oldest first, with its checkpoints joined.
    public func running() throws -> [RunningGameRecord] {
        try database.transaction(.deferred) { _ in
            let rows = try statements.prepare("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id").query(Self.record)
            return try withCheckpoints(rows).map(\.record)
        }
    }

    /// The player's running games (a player has at most one at a time while a server runs).
    public func running(playerID: Int64) throws -> [RunningGameRecord] {
        try database.transaction(.deferred) { _ in
            let rows = try statements.prepare("SELECT \(Self.columns) FROM running_games WHERE player_id = ? ORDER BY started_at, public_id")
                .query([playerID], Self.record)
            return try withCheckpoints(rows).map(\.record)
        }
    }

    /// The running game with this public id, or nil.
    public func running(publicID: String) throws -> RunningGameRecord? {
        try database.transaction(.deferred) { _ in
            let rows = try statements.prepare("SELECT \(Self.columns) FROM running_games WHERE public_id = ?").query([publicID], Self.record)
            return try withCheckpoints(rows).first?.record
        }
    }

    /// Ends every game left running (see the type's rules) and stores it in `games`, in one
    /// transaction, and clears the checkpoints: after a crash the server calls it once, before
    /// it accepts players. Returns what it stored, oldest start first; empty when the last stop
    /// was clean.
    public func recoverAll(now: Date) throws -> [RecoveredGame] {
        try database.transaction(.immediate) { db in
            let rows = try statements.prepare("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id")
                .query(Self.record)
            // One after another: each game's refund counts the ones stored before it.
            let recovered = try withCheckpoints(rows).map { row, problem in
                try store(RunningGameRecovery(row, problem: problem), db)
            }
            // No game runs now: every checkpoint belongs to a game that is stored.
            try statements.prepare("DELETE FROM game_checkpoints").execute()
            return recovered
        }
    }

    /// Ends the one game `publicID` by the same rules, in one transaction; nil when it no
    /// longer runs. Its checkpoints go with the next compaction, as a recorded game's do.
    public func recover(publicID: String, now: Date) throws -> RecoveredGame? {
        try database.transaction(.immediate) { db in
            let rows = try statements.prepare("SELECT \(Self.columns) FROM running_games WHERE public_id = ?").query([publicID], Self.record)
            return try withCheckpoints(rows).first.map { row, problem in
                try store(RunningGameRecovery(row, problem: problem), db)
            }
        }
    }

    // MARK: - Private

    /// Stores `recovery`'s game inside an open write transaction, giving back its play when
    /// the player's refunds of that day are under the cap.
    private func store(_ recovery: RunningGameRecovery, _ db: Database) throws -> RecoveredGame {
        let row = recovery.record
        var refunded = false
        if recovery.mayGiveBackPlay {
            let day = recovery.playDay
            let earlier = try statements.prepare("""
                SELECT count(*) FROM games
                WHERE player_id = ? AND play_refunded = 1 AND started_at >= ? AND started_at < ?
                """).query([row.playerID, UTCCivilTime.text(day.start), UTCCivilTime.text(day.end)]) { $0.int64(at: 0) }.first ?? 0
            if try recovery.givesBackPlay(refundedThatDay: earlier) {
                try statements.prepare("DELETE FROM plays WHERE player_id = ? AND game_id = ?").execute([row.playerID, row.publicID])
                refunded = db.changes == 1
            }
        }
        let game = try recovery.game(playRefunded: refunded)
        return RecoveredGame(recorded: try SQLiteGameRepository.insert(game, statements), problem: recovery.problem)
    }

    /// Rows one checkpoint INSERT holds at most (`CheckpointInsertStatements`).
    package static var rowsPerInsert: Int { CheckpointInsertStatements.rowsPerInsert }

    /// `rows` (at most ``rowsPerInsert``) in one run of `insert`, the statement of that many
    /// rows. Every value is bound as what it is, with no array of existentials; the two texts
    /// of each row are written into `texts` (the caller's buffer, reused) and bound in place,
    /// not copied by SQLite, and the bindings are cleared before `texts` can change, so the
    /// statement never keeps a stale pointer.
    private func insertCheckpoints(_ rows: ArraySlice<GameCheckpoint>, with insert: Statement, at: String,
                                   texts: inout [UInt8], spans: inout [Range<Int>]) throws {
        texts.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        for checkpoint in rows {
            let idStart = texts.count
            texts.append(contentsOf: checkpoint.publicID.utf8)
            spans.append(idStart..<texts.count)
            let movesStart = texts.count
            CheckpointLog.encode(checkpoint.moves, appendingTo: &texts)
            spans.append(movesStart..<texts.count)
        }
        defer { insert.clearBindings() }
        try insert.bindText(at, at: 1)
        try texts.withUnsafeBytes { buffer in
            for (row, checkpoint) in rows.enumerated() {
                let base = 2 + 5 * row
                try insert.bindTextInPlace(UnsafeRawBufferPointer(rebasing: buffer[spans[2 * row]]), at: base)
                try insert.bindInteger(Int64(checkpoint.steps), at: base + 1)
                try insert.bindInteger(Int64(checkpoint.movesBefore), at: base + 2)
                try insert.bindTextInPlace(UnsafeRawBufferPointer(rebasing: buffer[spans[2 * row + 1]]), at: base + 3)
                try insert.bindInteger(Int64(max(0, checkpoint.durationMilliseconds)), at: base + 4)
            }
            try insert.execute()
        }
    }

    /// The rows below `first` that `covered` made redundant, and those of games no longer running.
    private func deleteCompacted(before first: Int64, covered: Set<String>) throws {
        let running = try statements.prepare("SELECT public_id FROM running_games").query { $0.string(at: 0) }
        let kept = running.filter { !covered.contains($0) }
        if kept.isEmpty {
            // The usual case: a range of the rowid, deleted without reading the rows.
            try statements.prepare("DELETE FROM game_checkpoints WHERE id < ?").execute([first])
        } else {
            let keptJSON = "[" + kept.map { "\"\($0)\"" }.joined(separator: ",") + "]"
            try statements.prepare("""
                DELETE FROM game_checkpoints WHERE id < ? AND public_id NOT IN (SELECT value FROM json_each(?))
                """).execute([first, keptJSON])
        }
    }

    private static let columns = "public_id, player_id, level, seed, rules_version, practice, free_play, started_at, road, daily_day"

    private static func record(_ row: Statement) throws -> RunningGameRecord {
        let publicID = row.string(at: 0)
        guard let level = SpeedLevel(rawValue: row.string(at: 2)),
              let startedAt = UTCCivilTime.parse(row.string(at: 7)),
              let road = GameRoad(storedName: row.string(at: 8), day: row.isNull(at: 9) ? nil : row.string(at: 9))
        else {
            throw StoreError.unreadable("running_games row \(publicID) holds a value this build cannot read")
        }
        return RunningGameRecord(
            publicID: publicID, playerID: row.int64(at: 1), level: level, seed: UInt64(bitPattern: row.int64(at: 3)),
            rulesVersion: row.int(at: 4), practice: row.bool(at: 5), freePlay: row.bool(at: 6), startedAt: startedAt,
            inputLog: "0:", durationMilliseconds: 0, checkpointedAt: startedAt, road: road)
    }

    /// `rows` with their checkpoints joined: one pass over `game_checkpoints` in id order,
    /// keeping the rows of these games only. A checkpoint that does not follow on from the ones
    /// before it (its `movesBefore` is not their count) ends the game's log there, with the
    /// reason; so does an unreadable one.
    private func withCheckpoints(_ rows: [RunningGameRecord]) throws -> [(record: RunningGameRecord, problem: String?)] {
        guard !rows.isEmpty else { return [] }
        var joined = Dictionary(uniqueKeysWithValues: rows.map { ($0.publicID, CheckpointLog()) })
        let scan = try statements.prepare("SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints ORDER BY id")
        // One pass, not one query per game: the table has no index but its rowid.
        _ = try scan.query { row -> Void in
            let id = row.string(at: 0)
            joined[id]?.append(steps: row.int(at: 1), movesBefore: row.int(at: 2), moves: row.string(at: 3),
                               durationMilliseconds: row.int(at: 4), at: row.string(at: 5))
        }
        return rows.map { row in
            guard let log = joined[row.publicID] else { return (row, nil) }
            return (log.applied(to: row), log.problem)
        }
    }
}
