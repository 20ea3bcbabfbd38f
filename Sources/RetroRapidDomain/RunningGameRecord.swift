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
    /// Its road. A scored daily one takes the player's one attempt of the day at the level in
    /// ``RunningGameRepository/begin(_:)``, and its seed must be the day's.
    public var road: GameRoad

    public init(publicID: String, playerID: Int64, level: SpeedLevel, seed: UInt64,
                rulesVersion: Int = GameRules.version, practice: Bool, startedAt: Date, road: GameRoad = .random) {
        self.publicID = publicID
        self.playerID = playerID
        self.level = level
        self.seed = seed
        self.rulesVersion = rulesVersion
        self.practice = practice
        self.startedAt = startedAt
        self.road = road
    }

    /// The refusals of ``RunningGameRepository/begin(_:)``, the same in every backend.
    package func validate() throws(StoreError) {
        guard !publicID.isEmpty else {
            throw StoreError(.invalid, "must not be empty", field: "publicID")
        }
        guard rulesVersion >= 1 else {
            throw StoreError(.invalid, "must be 1 or more, got \(rulesVersion)", field: "rulesVersion")
        }
        try road.validate(practice: practice, startedAt: startedAt)
    }
}

/// What changed in a running game since its previous checkpoint: what a restart re-simulates
/// it from, once joined to the checkpoints before it.
public struct GameCheckpoint: Sendable, Equatable {
    public var publicID: String
    /// The game's step count now.
    public var steps: Int
    /// How many of its moves the previous checkpoints hold; 0 makes this one a full log.
    public var movesBefore: Int
    /// The moves after those.
    public var moves: [InputLog.Entry]
    /// Play time so far, pauses excluded.
    public var durationMilliseconds: Int

    public init(publicID: String, steps: Int, movesBefore: Int, moves: [InputLog.Entry], durationMilliseconds: Int) {
        self.publicID = publicID
        self.steps = steps
        self.movesBefore = movesBefore
        self.moves = moves
        self.durationMilliseconds = durationMilliseconds
    }

    /// The whole of `log`: a full checkpoint.
    public init(publicID: String, log: InputLog, durationMilliseconds: Int) {
        self.init(publicID: publicID, steps: log.steps, movesBefore: 0, moves: log.moves, durationMilliseconds: durationMilliseconds)
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
    /// `InputLog.encoded` of its checkpoints joined (`0:` before the first).
    public var inputLog: String
    /// Play time at the last checkpoint.
    public var durationMilliseconds: Int
    /// When the last checkpoint was taken (the start before the first).
    public var checkpointedAt: Date
    public var road: GameRoad

    public init(publicID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, rulesVersion: Int, practice: Bool,
                freePlay: Bool, startedAt: Date, inputLog: String, durationMilliseconds: Int, checkpointedAt: Date,
                road: GameRoad = .random) {
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
        self.road = road
    }
}

/// A game the server lost by crashing, as ``RunningGameRepository/recoverAll(now:)`` stored it.
public struct RecoveredGame: Sendable, Equatable {
    /// What was stored: `server_crash` (or `crash` when its checkpoint had already crashed).
    public var recorded: RecordedGame
    /// What was wrong with its checkpoints, if anything: ones that break off (it is ended at
    /// the last checkpoint before the break), or a log that cannot be re-simulated (it is then
    /// stored with no steps and a score of 0, and its play given back).
    public var problem: String?

    package init(recorded: RecordedGame, problem: String?) {
        self.recorded = recorded
        self.problem = problem
    }
}
