import CSQLite3
import Foundation
import RetroRapidRules

/// A game about to run, as its `running_games` row begins.
public struct RunningGameStart: Sendable, Equatable {
    /// The id the player is shown (`gameId`), kept as `games.public_id` when it ends.
    public var publicID: String
    public var playerID: Int64
    public var level: SpeedLevel
    public var seed: UInt64
    public var rulesVersion: Int
    public var practice: Bool
    /// When it starts: the stored start time, and the "now" of the play it consumes.
    public var startedAt: Date

    public init(publicID: String, playerID: Int64, level: SpeedLevel, seed: UInt64,
                rulesVersion: Int = GameRules.version, practice: Bool, startedAt: Date) {
        self.publicID = publicID
        self.playerID = playerID
        self.level = level
        self.seed = seed
        self.rulesVersion = rulesVersion
        self.practice = practice
        self.startedAt = startedAt
    }
}

/// Where a running game stands at a checkpoint: what a restart re-simulates it from.
public struct GameCheckpoint: Sendable, Equatable {
    public var publicID: String
    /// The log so far: every step taken and every move.
    public var inputLog: InputLog
    /// Play time so far, pauses excluded.
    public var durationMilliseconds: Int

    public init(publicID: String, inputLog: InputLog, durationMilliseconds: Int) {
        self.publicID = publicID
        self.inputLog = inputLog
        self.durationMilliseconds = durationMilliseconds
    }
}

/// A row of `running_games`.
public struct RunningGameRecord: Sendable, Equatable {
    public var publicID: String
    public var playerID: Int64
    public var level: SpeedLevel
    public var seed: UInt64
    public var rulesVersion: Int
    public var practice: Bool
    /// Its start consumed one of the day's free plays.
    public var freePlay: Bool
    public var startedAt: Date
    /// `InputLog.encoded` at the last checkpoint (`0:` before the first).
    public var inputLog: String
    public var durationMilliseconds: Int
    public var checkpointedAt: Date

    public init(publicID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, rulesVersion: Int, practice: Bool,
                freePlay: Bool, startedAt: Date, inputLog: String, durationMilliseconds: Int, checkpointedAt: Date) {
        self.publicID = publicID
        self.playerID = playerID
        self.level = level
        self.seed = seed
        self.rulesVersion = rulesVersion
        self.practice = practice
        self.freePlay = freePlay
        self.startedAt = startedAt
        self.inputLog = inputLog
        self.durationMilliseconds = durationMilliseconds
        self.checkpointedAt = checkpointedAt
    }
}

/// A game the server lost by crashing, as ``RunningGameRepository/recoverAll(now:)`` stored it.
public struct RecoveredGame: Sendable, Equatable {
    /// What was stored: `server_crash` (or `crash` when its checkpoint had already crashed).
    public var recorded: RecordedGame
    /// Why its checkpoint could not be re-simulated, when it could not: it is then stored with
    /// no steps and a score of 0 (and its play given back).
    public var unreplayable: String?
}

/// Games while they run (table `running_games`), so a crash of the server does not lose them.
///
/// The server calls ``begin(_:)`` when a game starts (the row and the play it
/// consumes in one transaction), ``checkpoint(_:now:)`` once an interval for every game whose
/// log changed (one transaction for all of them), and `GameRepository.record` deletes the row
/// in the transaction that stores the finished game. So a row left when the server starts is a
/// game it lost by dying; ``recoverAll(now:)`` ends each one from its checkpoint:
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
public struct RunningGameRepository {
    public let database: Database
    public let quota: QuotaRepository
    let statements: ScoreStatements

    public init(database: Database, dailyFreePlays: Int = 5) {
        self.database = database
        self.quota = QuotaRepository(database: database, dailyFreePlays: dailyFreePlays)
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
                try CommercePlayers.require(game.playerID, in: db)
            }
            let startedAt = UTCCivilTime.text(game.startedAt)
            try statements.prepare("""
                INSERT INTO running_games (public_id, player_id, level, seed, rules_version, practice, free_play,
                                           started_at, input_log, duration_ms, checkpointed_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '0:', 0, ?8)
                """).execute([
                    game.publicID, game.playerID, game.level.rawValue, Int64(bitPattern: game.seed), game.rulesVersion,
                    game.practice, freePlay, startedAt,
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

    /// Saves where each game of `batch` stands, in one transaction whatever its size (one
    /// commit, one fsync). A game no longer running (stored meanwhile) is skipped. Returns the
    /// number of rows updated.
    @discardableResult
    public func checkpoint(_ batch: [GameCheckpoint], now: Date) throws -> Int {
        guard !batch.isEmpty else { return 0 }
        let at = UTCCivilTime.text(now)
        return try database.transaction(.immediate) { db in
            let update = try statements.prepare("""
                UPDATE running_games SET input_log = ?, duration_ms = ?, checkpointed_at = max(?, started_at)
                WHERE public_id = ?
                """)
            var updated = 0
            for checkpoint in batch {
                try update.execute([checkpoint.inputLog.encoded, max(0, checkpoint.durationMilliseconds), at, checkpoint.publicID])
                updated += db.changes
            }
            return updated
        }
    }

    /// Every running game, oldest first.
    public func running() throws -> [RunningGameRecord] {
        try statements.prepare("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id").query(Self.record)
    }

    /// The player's running games (a player has at most one at a time while a server runs).
    public func running(playerID: Int64) throws -> [RunningGameRecord] {
        try statements.prepare("SELECT \(Self.columns) FROM running_games WHERE player_id = ? ORDER BY started_at, public_id")
            .query([playerID], Self.record)
    }

    /// The running game with this public id, or nil.
    public func running(publicID: String) throws -> RunningGameRecord? {
        try statements.prepare("SELECT \(Self.columns) FROM running_games WHERE public_id = ?").query([publicID], Self.record).first
    }

    /// Ends every game left running (see the type's rules) and stores it in `games`, in one
    /// transaction: after a crash the server calls it once, before it accepts players. Returns
    /// what it stored, oldest start first; empty when the last stop was clean.
    public func recoverAll(now: Date) throws -> [RecoveredGame] {
        try database.transaction(.immediate) { db in
            let rows = try statements.prepare("SELECT \(Self.columns) FROM running_games ORDER BY started_at, public_id")
                .query(Self.record)
            var recovered: [RecoveredGame] = []
            for row in rows {
                var log = InputLog()
                var state = GameState(seed: row.seed, level: row.level)
                var unreplayable: String?
                do {
                    let checkpointed = try InputLog(encoded: row.inputLog)
                    state = try Replay.run(seed: row.seed, level: row.level, log: checkpointed, rulesVersion: row.rulesVersion)
                    log = checkpointed
                } catch {
                    unreplayable = "\(error)"
                    state = GameState(seed: row.seed, level: row.level)
                }
                let crashed = unreplayable == nil && state.isOver
                var refunded = false
                if row.freePlay && !crashed {
                    try statements.prepare("DELETE FROM plays WHERE player_id = ? AND game_id = ?").execute([row.playerID, row.publicID])
                    refunded = db.changes == 1
                }
                // Whole seconds are stored: allow the second the flooring may have cut, as `record` does.
                let span = (UTCCivilTime.seconds(row.checkpointedAt) - UTCCivilTime.seconds(row.startedAt) + 1) * 1000
                let game = NewGame(
                    publicID: row.publicID, playerID: row.playerID, level: row.level, seed: row.seed,
                    rulesVersion: row.rulesVersion, inputLog: log, score: state.score, steps: state.step,
                    endReason: crashed ? .crash : .serverCrash, practice: row.practice,
                    startedAt: row.startedAt, endedAt: max(row.checkpointedAt, row.startedAt),
                    durationMilliseconds: Int(min(Int64(row.durationMilliseconds), max(0, span))), playRefunded: refunded)
                try GameRepository.validate(game)
                recovered.append(RecoveredGame(recorded: try GameRepository.insert(game, statements), unreplayable: unreplayable))
            }
            return recovered
        }
    }

    // MARK: - Private

    private static let columns = """
        public_id, player_id, level, seed, rules_version, practice, free_play, started_at, input_log,
        duration_ms, checkpointed_at
        """

    private static func record(_ row: Statement) throws -> RunningGameRecord {
        let publicID = row.string(at: 0)
        guard let level = SpeedLevel(rawValue: row.string(at: 2)),
              let startedAt = UTCCivilTime.parse(row.string(at: 7)),
              let checkpointedAt = UTCCivilTime.parse(row.string(at: 10))
        else {
            throw DatabaseError(extendedCode: SQLITE_CORRUPT, message: "running_games row \(publicID) holds a value this build cannot read")
        }
        return RunningGameRecord(
            publicID: publicID, playerID: row.int64(at: 1), level: level, seed: UInt64(bitPattern: row.int64(at: 3)),
            rulesVersion: row.int(at: 4), practice: row.bool(at: 5), freePlay: row.bool(at: 6), startedAt: startedAt,
            inputLog: row.string(at: 8), durationMilliseconds: row.int(at: 9), checkpointedAt: checkpointedAt)
    }
}
