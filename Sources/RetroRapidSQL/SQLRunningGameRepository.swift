import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Games while they run (table `running_games`), so a crash of the server does not lose them.
///
/// The server calls ``begin(_:)`` when a game starts (the row and the play it consumes in one
/// transaction), ``checkpoint(_:compacting:now:)`` once an interval with what changed in every
/// game (one transaction for all of them, appended to `game_checkpoints` in the backend's own
/// way, ``SQLCheckpointTable``), and `GameRepository.record` deletes the row in the transaction
/// that stores the finished game. So a row left behind is a game its server lost by dying;
/// ``recoverAll(now:)`` (SQLite, at start) and ``recover(publicID:now:)`` (a cluster taking a
/// dead node's game back) end it from its checkpoints:
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
///   given back so: the refunded `server_crash` games of that day are counted, under the
///   player's row lock, in the same transaction that stores the game, so crashing the server
///   again buys nothing. Beyond the cap the game is stored the same, its play kept.
/// - A checkpoint whose replay had already crashed (the player's crash was waiting out the
///   grace window, or being saved, when the server died) is stored as the `crash` it is, and
///   keeps its play: the rules ended that game, not the server.
///
/// With many connections (PostgreSQL), a recovery locks the rows it ends, so a record or
/// cancel of the same game at once waits for it and then finds nothing: a play is given back
/// once.
///
/// Threading rule: as its executor, one thread at a time (a storage thread).
public struct SQLRunningGameRepository: RunningGameRepository {
    public let executor: any SQLExecutor
    public let quota: SQLQuotaRepository
    /// The backend's own way with `game_checkpoints`.
    let checkpoints: any SQLCheckpointTable

    public init(executor: any SQLExecutor, checkpoints: any SQLCheckpointTable, dailyFreePlays: Int = 5) {
        self.executor = executor
        self.checkpoints = checkpoints
        self.quota = SQLQuotaRepository(executor: executor, dailyFreePlays: dailyFreePlays)
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
        return try executor.writeTransaction {
            var status: QuotaStatus?
            var freePlay = false
            if let day = game.road.day {
                // The player's row first, as every start of theirs takes it (the play below too).
                try SQLPlayerLookup.requirePlayer(game.playerID, in: executor, lockingRow: true)
                try SQLDailyRoadRepository.requireDailySeed(game, day: day, executor)
                if !game.practice { try SQLDailyRoadRepository.takeAttempt(game, day: day, executor) }
            }
            if !game.practice {
                (status, freePlay) = try quota.consumePlayInTransaction(playerID: game.playerID, gameID: game.publicID, now: game.startedAt)
            } else {
                try SQLPlayerLookup.requirePlayer(game.playerID, in: executor, lockingRow: true)
            }
            try executor.query("""
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

    /// A game that was begun but never ran (the server began stopping before it started):
    /// its row goes and its free play, if it took one, is given back. False when there was no
    /// such row.
    @discardableResult
    public func cancel(publicID: String) throws -> Bool {
        try executor.writeTransaction {
            // The row first, locked and gone in one statement: a concurrent cancel or record of
            // the same game waits, then finds nothing, so the play is given back once.
            guard let row = try executor.query("DELETE FROM running_games WHERE public_id = $1 RETURNING player_id, free_play",
                                               [publicID]).first else { return false }
            if try row.bool("free_play") {
                try executor.query("DELETE FROM plays WHERE player_id = $1 AND game_id = $2", [try row.int64("player_id"), publicID])
            }
            // A start that never ran was no daily attempt either.
            try executor.query("DELETE FROM daily_attempts WHERE game_id = $1", [publicID])
            return true
        }
    }

    /// Appends `batch` to the games' checkpoints, in one transaction whatever its size (one
    /// commit, one fsync). A checkpoint whose `movesBefore` does not match what the game's
    /// earlier rows hold is not lost data but a caller's mistake; the reader stops at it, so
    /// the game is recovered to the last consistent checkpoint.
    ///
    /// - Parameter compacting: the batch holds a full log (`movesBefore` 0) of every game the
    ///   caller runs; then every older row goes, but those of a game still in `running_games`
    ///   that the batch left out (one whose save failed), so nothing recoverable is lost.
    public func checkpoint(_ batch: [GameCheckpoint], compacting: Bool = false, now: Date) throws {
        guard !batch.isEmpty || compacting else { return }
        let at = UTCCivilTime.text(now)
        try executor.writeTransaction {
            // This node's checkpoints are written one batch at a time (CheckpointWriter), so
            // every older row of its games is below `first` and every row of this batch at or above.
            let first = compacting ? try checkpoints.nextRowID() : 0
            if !batch.isEmpty { try checkpoints.append(batch, at: at) }
            guard compacting, first > Int64.min else { return }
            while try checkpoints.deleteOwnSlices(below: first, games: Int.max) {}
            let compaction = CheckpointCompaction(first: first, covered: Set(batch.lazy.filter { $0.movesBefore == 0 }.map(\.publicID)),
                                                  rowsPerPart: Int.max)
            try checkpoints.deleteCompacted(Int64.min...(first - 1), of: compaction)
        }
    }

    public func checkpointHandedOver(_ log: GameCheckpoint, now: Date) throws {
        precondition(log.movesBefore == 0, "a handed-over log is whole")
        try executor.writeTransaction { try checkpoints.appendHandedOver(log, at: UTCCivilTime.text(now)) }
    }

    @discardableResult
    public func gatherCheckpoints(now: Date, lease: TimeInterval) throws -> Int {
        try executor.writeTransaction {
            try checkpoints.gatherSlices(notSeenSince: SQLClusterRepository.staleBefore(now, lease))
        }
    }

    public func nextCheckpointRowID() throws -> Int64 {
        try executor.readTransaction { try checkpoints.nextRowID() }
    }

    /// One part, in one transaction: the ids from `next` (or the lowest row's) up to
    /// `rowsPerPart` of them, the redundant rows among them deleted, and where the next part
    /// starts: the next row's id, so a gap costs no part of its own. A range, not "the next so
    /// many rows", so a part's work is bounded whatever plan the database picks.
    public func compactCheckpoints(_ compaction: CheckpointCompaction) throws -> CheckpointCompaction {
        guard !compaction.isFinished else { return compaction }
        return try executor.writeTransaction {
            var rest = compaction
            // This process's slices below the round first (the round wrote every game it runs
            // whole), about a part's games at a time, as the rows below.
            if try checkpoints.deleteOwnSlices(below: compaction.first, games: compaction.rowsPerPart) { return rest }
            guard let start = try compaction.next ?? lowestCheckpointRow(from: Int64.min, below: compaction.first),
                  start < compaction.first else {
                rest.isFinished = true
                return rest
            }
            // Bounded by `first` - 1 and by Int64's range: ids come from the database.
            let (reach, overflow) = start.addingReportingOverflow(Int64(compaction.rowsPerPart) - 1)
            let last = min(overflow ? Int64.max : reach, compaction.first - 1)
            try checkpoints.deleteCompacted(start...last, of: compaction)
            if rest.lowestKept == nil, let kept = try lowestCheckpointRow(from: start, below: last + 1) {
                rest.lowestKept = kept
            }
            if last < compaction.first - 1, let next = try lowestCheckpointRow(from: last + 1, below: compaction.first) {
                rest.next = next
            } else {
                rest.isFinished = true
            }
            return rest
        }
    }

    /// The lowest id of a checkpoint row in `from..<below`, nil when there is none. One descent
    /// of the table's id order, which stops at the first row this transaction still sees.
    private func lowestCheckpointRow(from: Int64, below: Int64) throws -> Int64? {
        guard let row = try executor.query("SELECT min(id) AS lowest FROM game_checkpoints WHERE id >= $1 AND id < $2",
                                           [from, below]).first,
              let lowest = try row.optionalInt64("lowest") else { return nil }
        // Ids come from the database: one outside the range asked for is not acted on.
        guard lowest >= from, lowest < below else {
            throw StoreError.unreadable("a checkpoint row's id \(lowest) came back outside \(from)..<\(below)")
        }
        return lowest
    }

    /// Every running game, oldest first, with its checkpoints joined.
    public func running() throws -> [RunningGameRecord] {
        try executor.readTransaction {
            let rows = try executor.query("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id", []).rows.map(Self.record)
            return try withCheckpoints(rows).map(\.record)
        }
    }

    /// The player's running games (a player has at most one at a time while a server runs).
    public func running(playerID: Int64) throws -> [RunningGameRecord] {
        try executor.readTransaction {
            let rows = try executor.query("SELECT \(Self.columns) FROM running_games WHERE player_id = $1 ORDER BY started_at, public_id",
                                          [playerID]).rows.map(Self.record)
            return try withCheckpoints(rows).map(\.record)
        }
    }

    /// The running game with this public id, or nil.
    public func running(publicID: String) throws -> RunningGameRecord? {
        try executor.readTransaction {
            let rows = try executor.query("SELECT \(Self.columns) FROM running_games WHERE public_id = $1", [publicID]).rows.map(Self.record)
            return try withCheckpoints(rows).first?.record
        }
    }

    /// Ends every game left running (see the type's rules) and stores it in `games`, in one
    /// transaction, and clears their checkpoints: after a crash a lone server calls it once,
    /// before it accepts players. Returns what it stored, oldest start first; empty when the
    /// last stop was clean.
    public func recoverAll(now: Date) throws -> [RecoveredGame] {
        try executor.writeTransaction {
            let rows = try executor.query("""
                SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id\(executor.dialect.lockingRead)
                """, []).rows.map(Self.record)
            // One after another: each game's refund counts the ones stored before it.
            let recovered = try withCheckpoints(rows).map { row, problem in
                try store(RunningGameRecovery(row, problem: problem))
            }
            // Every checkpoint whose game no longer runs: after this, all of a lone server's.
            try executor.query("""
                DELETE FROM game_checkpoints WHERE NOT EXISTS (SELECT 1 FROM running_games r WHERE r.public_id = game_checkpoints.public_id)
                """, [])
            return recovered
        }
    }

    /// Ends the one game `publicID` by the same rules, in one transaction; nil when it no
    /// longer runs. Its checkpoints go with the next compaction, as a recorded game's do.
    public func recover(publicID: String, now: Date) throws -> RecoveredGame? {
        try executor.writeTransaction {
            let rows = try executor.query("SELECT \(Self.columns) FROM running_games WHERE public_id = $1\(executor.dialect.lockingRead)",
                                          [publicID]).rows.map(Self.record)
            return try withCheckpoints(rows).first.map { row, problem in
                try store(RunningGameRecovery(row, problem: problem))
            }
        }
    }

    // MARK: - Private

    /// Stores `recovery`'s game inside an open write transaction, giving back its play when
    /// the player's refunds of that day are under the cap (counted under the player's row lock).
    private func store(_ recovery: RunningGameRecovery) throws -> RecoveredGame {
        let row = recovery.record
        var refunded = false
        if recovery.mayGiveBackPlay {
            try SQLPlayerLookup.requirePlayer(row.playerID, in: executor, lockingRow: true)
            let day = recovery.playDay
            let earlier = try executor.query("""
                SELECT count(*) AS refunded FROM games
                WHERE player_id = $1 AND play_refunded AND started_at >= $2 AND started_at < $3
                """, [row.playerID, UTCCivilTime.text(day.start), UTCCivilTime.text(day.end)]).first?.int64("refunded") ?? 0
            if try recovery.givesBackPlay(refundedThatDay: earlier) {
                refunded = try executor.query("DELETE FROM plays WHERE player_id = $1 AND game_id = $2",
                                              [row.playerID, row.publicID]).affectedRows == 1
            }
        }
        let game = try recovery.game(playRefunded: refunded)
        return RecoveredGame(recorded: try SQLGameRepository.insert(game, executor), problem: recovery.problem)
    }

    private static let columns = "public_id, player_id, level, seed, rules_version, practice, free_play, started_at, road, daily_day"

    private static func record(_ row: SQLRow) throws -> RunningGameRecord {
        let publicID = try row.string("public_id")
        guard let level = SpeedLevel(rawValue: try row.string("level")),
              let startedAt = UTCCivilTime.parse(try row.string("started_at")),
              let road = GameRoad(storedName: try row.string("road"), day: try row.optionalString("daily_day"))
        else {
            throw StoreError.unreadable("running_games row \(publicID) holds a value this build cannot read")
        }
        return RunningGameRecord(
            publicID: publicID, playerID: try row.int64("player_id"), level: level, seed: UInt64(bitPattern: try row.int64("seed")),
            rulesVersion: try row.int("rules_version"), practice: try row.bool("practice"), freePlay: try row.bool("free_play"),
            startedAt: startedAt, inputLog: "0:", durationMilliseconds: 0, checkpointedAt: startedAt, road: road)
    }

    /// `rows` with their checkpoints joined. A checkpoint that does not follow on from the ones
    /// before it (its `movesBefore` is not their count) ends the game's log there, with the
    /// reason; so does an unreadable one.
    private func withCheckpoints(_ rows: [RunningGameRecord]) throws -> [(record: RunningGameRecord, problem: String?)] {
        guard !rows.isEmpty else { return [] }
        var joined = Dictionary(uniqueKeysWithValues: rows.map { ($0.publicID, CheckpointLog()) })
        try checkpoints.forEachRow(ofGames: rows.map(\.publicID)) { row in
            joined[row.publicID]?.append(steps: row.steps, movesBefore: row.movesBefore, moves: row.moves,
                                         durationMilliseconds: row.durationMilliseconds, at: row.at)
        }
        return rows.map { row in
            guard let log = joined[row.publicID] else { return (row, nil) }
            return (log.applied(to: row), log.problem)
        }
    }
}
