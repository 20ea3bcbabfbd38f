import Foundation
import RetroRapidRules

/// Why a game ended.
public enum GameEndReason: String, CaseIterable, Sendable, Codable {
    /// The player crashed: the rules ended it.
    case crash
    /// The player left (closed the page, lost the connection past the resume window).
    case abandoned
    /// The server shut down while it ran; it is stored as it stood.
    case shutdown
    /// The server died (a crash, SIGKILL, power loss) while it ran; it was ended when the server
    /// started again, with the score its last checkpoint reached (``RunningGameRepository``).
    case serverCrash = "server_crash"
}

/// A finished game as the server hands it to ``GameRepository/record(_:)``.
///
/// Everything needed to re-simulate it (seed, level, rules version, input log) and what it
/// ended as (score, steps). Abandoned, shutdown and server_crash games keep the score they
/// reached and count on the leaderboards like crashed ones: the points were earned. Practice
/// games (the tutorial's road) are stored for replay but score nothing: no personal best, no
/// leaderboard.
public struct NewGame: Sendable, Equatable {
    /// The id the player was shown (`gameId`); its `running_games` row goes in the same
    /// transaction. Nil only for games made without one (tools, older tests).
    public var publicID: String?
    public var playerID: Int64
    public var level: SpeedLevel
    public var seed: UInt64
    public var rulesVersion: Int
    public var inputLog: InputLog
    public var score: Int
    /// Steps taken; must equal `inputLog.steps`.
    public var steps: Int
    public var endReason: GameEndReason
    public var practice: Bool
    public var startedAt: Date
    /// When the game ended: the "now" of recording, and the moment its score was achieved,
    /// which decides the day and week it counts for.
    public var endedAt: Date
    /// Time actually played, pauses excluded; at most the time from start to end.
    public var durationMilliseconds: Int
    /// The free play its start consumed was given back (a `server_crash` game only).
    public var playRefunded: Bool
    /// Its road; a scored daily game also goes on its day's board (``DailyRoadRepository``).
    public var road: GameRoad

    public init(
        publicID: String? = nil, playerID: Int64, level: SpeedLevel, seed: UInt64, rulesVersion: Int = GameRules.version,
        inputLog: InputLog, score: Int, steps: Int, endReason: GameEndReason, practice: Bool = false,
        startedAt: Date, endedAt: Date, durationMilliseconds: Int, playRefunded: Bool = false, road: GameRoad = .random
    ) {
        self.publicID = publicID
        self.playerID = playerID
        self.level = level
        self.seed = seed
        self.rulesVersion = rulesVersion
        self.inputLog = inputLog
        self.score = score
        self.steps = steps
        self.endReason = endReason
        self.practice = practice
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.durationMilliseconds = durationMilliseconds
        self.playRefunded = playRefunded
        self.road = road
    }
}

/// A stored game (a row of `games`).
public struct GameRecord: Sendable, Equatable {
    public var id: Int64
    /// The id the player was shown; nil for games stored before migration 0005.
    public var publicID: String?
    public var playerID: Int64
    public var level: SpeedLevel
    public var seed: UInt64
    public var rulesVersion: Int
    /// `InputLog.encoded`; read it back with `InputLog(encoded:)`.
    public var inputLog: String
    public var score: Int
    public var steps: Int
    public var endReason: GameEndReason
    public var practice: Bool
    /// Whole UTC seconds, as stored.
    public var startedAt: Date
    public var endedAt: Date
    public var durationMilliseconds: Int
    /// A `server_crash` game whose free play was given back.
    public var playRefunded: Bool
    public var road: GameRoad

    public init(
        id: Int64, publicID: String? = nil, playerID: Int64, level: SpeedLevel, seed: UInt64, rulesVersion: Int,
        inputLog: String, score: Int, steps: Int, endReason: GameEndReason, practice: Bool, startedAt: Date,
        endedAt: Date, durationMilliseconds: Int, playRefunded: Bool = false, road: GameRoad = .random
    ) {
        self.id = id
        self.publicID = publicID
        self.playerID = playerID
        self.level = level
        self.seed = seed
        self.rulesVersion = rulesVersion
        self.inputLog = inputLog
        self.score = score
        self.steps = steps
        self.endReason = endReason
        self.practice = practice
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.durationMilliseconds = durationMilliseconds
        self.playRefunded = playRefunded
        self.road = road
    }

    /// How people name it: the public id, or `#` and the row id for a game stored before 0005.
    public var displayID: String { publicID ?? "#\(id)" }
}

/// A player's standing on one leaderboard after a game, for the game-over message.
public struct LeaderboardStanding: Sendable, Equatable {
    public var level: SpeedLevel
    public var period: LeaderboardPeriod
    /// `2026-01-15`, `2026-W03` or `all`.
    public var periodKey: String
    /// The player's best on this board, this game included.
    public var personalBest: Int
    /// True when this game set `personalBest` (a strictly higher score than before, or the
    /// player's first on this board).
    public var isNewBest: Bool
    /// 1-based position of the player's best on this board.
    public var rank: Int

    public init(level: SpeedLevel, period: LeaderboardPeriod, periodKey: String, personalBest: Int, isNewBest: Bool, rank: Int) {
        self.level = level
        self.period = period
        self.periodKey = periodKey
        self.personalBest = personalBest
        self.isNewBest = isNewBest
        self.rank = rank
    }
}

/// What ``GameRepository/record(_:)`` stored and what it means for the player.
public struct RecordedGame: Sendable, Equatable {
    public var game: GameRecord
    /// Today, this week and all time for the game's level, in that order; empty for practice.
    public var standings: [LeaderboardStanding]
    /// Its place on its day's daily board: a scored daily game only.
    public var daily: DailyStanding?

    package init(game: GameRecord, standings: [LeaderboardStanding], daily: DailyStanding? = nil) {
        self.game = game
        self.standings = standings
        self.daily = daily
    }

    public func standing(_ period: LeaderboardPeriod) -> LeaderboardStanding? {
        standings.first { $0.period == period }
    }
}

/// A stored game whose replay disagrees with what was stored (``GameRepository/verifyAll(progress:visiting:)``).
public struct GameMismatch: Sendable, Equatable, CustomStringConvertible {
    public var gameID: Int64
    /// The game's public id (nil for games stored before migration 0005).
    public var publicID: String?
    public var playerID: Int64
    public var storedScore: Int
    public var storedSteps: Int
    /// What the replay reached; nil when the game could not be replayed at all.
    public var replayedScore: Int?
    public var replayedSteps: Int?
    /// In words: which values differ, or why the replay failed.
    public var reason: String

    public init(gameID: Int64, publicID: String? = nil, playerID: Int64, storedScore: Int, storedSteps: Int,
                replayedScore: Int?, replayedSteps: Int?, reason: String) {
        self.gameID = gameID
        self.publicID = publicID
        self.playerID = playerID
        self.storedScore = storedScore
        self.storedSteps = storedSteps
        self.replayedScore = replayedScore
        self.replayedSteps = replayedSteps
        self.reason = reason
    }

    public var description: String {
        let replayed = replayedScore.map { "replayed score \($0) steps \(replayedSteps ?? 0)" } ?? "not replayable"
        return "game \(publicID ?? "#\(gameID)") (player \(playerID)): stored score \(storedScore) steps \(storedSteps), \(replayed): \(reason)"
    }
}

extension GameRecord {
    /// How many games one page of a player's games may ask for.
    public static let pageSizeRange = 1...500

    /// A page size of ``GameRepository/games(playerID:limit:before:)``, checked the same in
    /// every backend (`.invalid` outside ``pageSizeRange``).
    public static func validatedPageSize(_ limit: Int) throws -> Int {
        guard pageSizeRange.contains(limit) else {
            throw StoreError(.invalid, "must be from \(pageSizeRange.lowerBound) to \(pageSizeRange.upperBound), got \(limit)", field: "limit")
        }
        return limit
    }
}

extension GameMismatch {
    /// The mismatch for one game, or nil when its replay agrees with what was stored.
    public static func check(_ game: GameRecord) -> GameMismatch? {
        func mismatch(_ reason: String, _ state: GameState? = nil) -> GameMismatch {
            GameMismatch(gameID: game.id, publicID: game.publicID, playerID: game.playerID, storedScore: game.score, storedSteps: game.steps,
                     replayedScore: state?.score, replayedSteps: state?.step, reason: reason)
        }
        let log: InputLog
        do {
            log = try InputLog(encoded: game.inputLog)
        } catch {
            return mismatch("cannot replay: \(error)")
        }
        let state: GameState
        do {
            state = try Replay.run(seed: game.seed, level: game.level, log: log, rulesVersion: game.rulesVersion)
        } catch {
            return mismatch("cannot replay: \(error)")
        }
        var differences: [String] = []
        if state.score != game.score { differences.append("score \(game.score) stored, \(state.score) replayed") }
        if state.step != game.steps { differences.append("steps \(game.steps) stored, \(state.step) replayed") }
        if game.endReason == .crash, !state.isOver { differences.append("stored as a crash but the replay did not crash") }
        if game.endReason != .crash, state.isOver { differences.append("stored as \(game.endReason.rawValue) but the replay crashed") }
        return differences.isEmpty ? nil : mismatch(differences.joined(separator: "; "), state)
    }
}

extension NewGame {
    /// The refusals of ``GameRepository/record(_:)``, the same in every backend.
    package func validate() throws(StoreError) {
        if let publicID = self.publicID, publicID.isEmpty {
            throw StoreError(.invalid, "must not be empty; pass nil for a game without one", field: "publicID")
        }
        guard !self.playRefunded || self.endReason == .serverCrash else {
            throw StoreError(.invalid, "only a server_crash game has its play refunded", field: "playRefunded")
        }
        guard self.rulesVersion >= 1 else {
            throw StoreError(.invalid, "must be 1 or more, got \(self.rulesVersion)", field: "rulesVersion")
        }
        guard self.score >= 0 else {
            throw StoreError(.invalid, "must not be negative, got \(self.score)", field: "score")
        }
        guard self.steps == self.inputLog.steps else {
            throw StoreError(.invalid, "must equal the input log's step count \(self.inputLog.steps), got \(self.steps)", field: "steps")
        }
        // A row never holds three cars, so a step overtakes at most two.
        guard self.score <= 2 * self.steps else {
            throw StoreError(.invalid, "cannot exceed two per step taken (\(self.steps) steps), got \(self.score)", field: "score")
        }
        let start = UTCCivilTime.seconds(self.startedAt)
        let end = UTCCivilTime.seconds(self.endedAt)
        guard end >= start else {
            throw StoreError(.invalid, "must not be before startedAt", field: "endedAt")
        }
        // Whole seconds are stored, so allow the second the flooring may have cut.
        guard self.durationMilliseconds >= 0, Int64(self.durationMilliseconds) <= (end - start + 1) * 1000 else {
            throw StoreError(.invalid, "must be from 0 to the time between start and end, got \(self.durationMilliseconds) ms", field: "durationMilliseconds")
        }
        try self.road.validate(practice: self.practice, startedAt: self.startedAt)
    }
}
