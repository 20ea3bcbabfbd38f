import Foundation
import RetroRapidDomain
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
/// - A checkpoint whose replay had already crashed (the player's crash was waiting out the
///   grace window, or being saved, when the server died) is stored as the `crash` it is, and
///   keeps its play: the rules ended that game, not the server.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteRunningGameRepository: RunningGameRepository {
    public let database: Database
    public let quota: SQLiteQuotaRepository
    let statements: ScoreStatements

    public init(database: Database, dailyFreePlays: Int = 5) {
        self.database = database
        self.quota = SQLiteQuotaRepository(database: database, dailyFreePlays: dailyFreePlays)
        self.statements = ScoreStatements(database)
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
        guard !game.publicID.isEmpty else {
            throw StoreError(.invalid, "must not be empty", field: "publicID")
        }
        guard game.rulesVersion >= 1 else {
            throw StoreError(.invalid, "must be 1 or more, got \(game.rulesVersion)", field: "rulesVersion")
        }
        return try database.transaction(.immediate) { db in
            var status: QuotaStatus?
            var freePlay = false
            if !game.practice {
                (status, freePlay) = try quota.consumePlay(db, playerID: game.playerID, gameID: game.publicID, now: game.startedAt)
            } else {
                try SQLitePlayerRepository.requirePlayer(game.playerID, in: db)
            }
            try statements.prepare("""
                INSERT INTO running_games (public_id, player_id, level, seed, rules_version, practice, free_play, started_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).execute([
                    game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                    game.practice, freePlay, UTCCivilTime.text(game.startedAt),
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
            try statements.prepare("DELETE FROM running_games WHERE public_id = ?").execute([publicID])
            return db.changes == 1
        }
    }

    /// Appends `batch` to the games' checkpoints, in one transaction whatever its size (one
    /// commit, one fsync, a few pages appended). A checkpoint whose `movesBefore` does not
    /// match what the game's earlier rows hold is not lost data but a caller's mistake; the
    /// reader stops at it, so the game is recovered to the last consistent checkpoint.
    ///
    /// - Parameter compacting: the batch holds a full log (`movesBefore` 0) of every game the
    ///   caller runs; then every older row goes, but those of a game still in `running_games`
    ///   that the batch left out (one whose save failed), so nothing recoverable is lost.
    public func checkpoint(_ batch: [GameCheckpoint], compacting: Bool = false, now: Date) throws {
        guard !batch.isEmpty || compacting else { return }
        let at = UTCCivilTime.text(now)
        try database.transaction(.immediate) { db in
            let first = (try statements.prepare("SELECT coalesce(max(id), 0) + 1 FROM game_checkpoints").query { $0.int64(at: 0) }.first) ?? 1
            let append = try statements.prepare("""
                INSERT INTO game_checkpoints (public_id, steps, moves_before, moves, duration_ms, at) VALUES (?, ?, ?, ?, ?, ?)
                """)
            for checkpoint in batch {
                try append.execute([
                    checkpoint.publicID, checkpoint.steps, checkpoint.movesBefore, Self.encode(checkpoint.moves),
                    max(0, checkpoint.durationMilliseconds), at,
                ])
            }
            guard compacting else { return }
            let covered = Set(batch.lazy.filter { $0.movesBefore == 0 }.map(\.publicID))
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
            var recovered: [RecoveredGame] = []
            for (row, problem) in try withCheckpoints(rows) {
                var log = InputLog()
                var state = GameState(seed: row.seed, level: row.level)
                var problem = problem
                var replayed = true
                do {
                    let checkpointed = try InputLog(encoded: row.inputLog)
                    state = try Replay.run(seed: row.seed, level: row.level, log: checkpointed, rulesVersion: row.rulesVersion)
                    log = checkpointed
                } catch {
                    problem = [problem, "cannot be re-simulated: \(error)"].compactMap { $0 }.joined(separator: "; ")
                    state = GameState(seed: row.seed, level: row.level)
                    replayed = false
                }
                let crashed = replayed && state.isOver
                var refunded = false
                if row.freePlay && !crashed {
                    try statements.prepare("DELETE FROM plays WHERE player_id = ? AND game_id = ?").execute([row.playerID, row.publicID])
                    refunded = db.changes == 1
                }
                // Whole seconds are stored: allow the second the flooring may have cut, as `record` does.
                let endedAt = max(row.checkpointedAt, row.startedAt)
                let span = (UTCCivilTime.seconds(endedAt) - UTCCivilTime.seconds(row.startedAt) + 1) * 1000
                let game = NewGame(
                    publicID: row.publicID, playerID: row.playerID, level: row.level, seed: row.seed,
                    rulesVersion: row.rulesVersion, inputLog: log, score: state.score, steps: state.step,
                    endReason: crashed ? .crash : .serverCrash, practice: row.practice,
                    startedAt: row.startedAt, endedAt: endedAt,
                    durationMilliseconds: replayed ? Int(min(Int64(row.durationMilliseconds), span)) : 0,
                    playRefunded: refunded)
                try game.validate()
                recovered.append(RecoveredGame(recorded: try SQLiteGameRepository.insert(game, statements), problem: problem))
            }
            // No game runs now: every checkpoint belongs to a game that is stored.
            try statements.prepare("DELETE FROM game_checkpoints").execute()
            return recovered
        }
    }

    // MARK: - Private

    private static let columns = "public_id, player_id, level, seed, rules_version, practice, free_play, started_at"

    private static func record(_ row: Statement) throws -> RunningGameRecord {
        let publicID = row.string(at: 0)
        guard let level = SpeedLevel(rawValue: row.string(at: 2)),
              let startedAt = UTCCivilTime.parse(row.string(at: 7))
        else {
            throw StoreError.unreadable("running_games row \(publicID) holds a value this build cannot read")
        }
        return RunningGameRecord(
            publicID: publicID, playerID: row.int64(at: 1), level: level, seed: UInt64(bitPattern: row.int64(at: 3)),
            rulesVersion: row.int(at: 4), practice: row.bool(at: 5), freePlay: row.bool(at: 6), startedAt: startedAt,
            inputLog: "0:", durationMilliseconds: 0, checkpointedAt: startedAt)
    }

    /// The moves as `InputLog.encoded` writes them after its colon.
    static func encode(_ moves: [InputLog.Entry]) -> String {
        moves.map { "\($0.afterStep)\($0.direction == .left ? "L" : "R")" }.joined(separator: ",")
    }

    /// `rows` with their checkpoints joined: one pass over `game_checkpoints` in id order,
    /// keeping the rows of these games only. A checkpoint that does not follow on from the ones
    /// before it (its `movesBefore` is not their count) ends the game's log there, with the
    /// reason; so does an unreadable one.
    private func withCheckpoints(_ rows: [RunningGameRecord]) throws -> [(record: RunningGameRecord, problem: String?)] {
        guard !rows.isEmpty else { return [] }
        struct Joined {
            var steps = 0
            var moves: [InputLog.Entry] = []
            var duration = 0
            var at: String?
            var problem: String?
        }
        var joined = Dictionary(uniqueKeysWithValues: rows.map { ($0.publicID, Joined()) })
        let scan = try statements.prepare("SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints ORDER BY id")
        // One pass, not one query per game: the table has no index but its rowid.
        _ = try scan.query { row -> Void in
            let id = row.string(at: 0)
            guard var game = joined[id], game.problem == nil else { return }
            let steps = row.int(at: 1), movesBefore = row.int(at: 2)
            if movesBefore == 0 {
                game.moves = []
            } else if movesBefore != game.moves.count {
                game.problem = "its checkpoints break off: one follows \(movesBefore) moves where \(game.moves.count) came before"
                joined[id] = game
                return
            }
            do {
                game.moves += try InputLog(encoded: "\(steps):" + row.string(at: 3)).moves
            } catch {
                game.problem = "\(error)"
                joined[id] = game
                return
            }
            game.steps = steps
            game.duration = row.int(at: 4)
            game.at = row.string(at: 5)
            joined[id] = game
        }
        return rows.map { row in
            var record = row
            guard let game = joined[row.publicID] else { return (record, nil) }
            record.inputLog = InputLog(steps: game.steps, moves: game.moves).encoded
            record.durationMilliseconds = game.duration
            record.checkpointedAt = game.at.flatMap(UTCCivilTime.parse) ?? row.startedAt
            return (record, game.problem)
        }
    }
}
