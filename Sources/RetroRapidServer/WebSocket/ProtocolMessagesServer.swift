import Foundation
import RetroRapidRules
import RetroRapidDomain

/// What the server sends on `/ws`: semantic events, not presentation (docs/PROTOCOL.md). Each is one
/// JSON object with a `type`; docs/PROTOCOL.md shows an example of each. Haptic moments ride
/// on the message they belong to (`"haptic":"step"`), so a step is still one message.
///
/// Every case with a payload wider than a step's is `indirect` (boxed): a message is as wide as
/// its widest case, and with `welcome` inline every message, a step included, was 968 bytes to
/// copy, and an array of four of them 4 KB to allocate on every step (docs/BENCHMARKS.md, "Cost
/// per frame"). Boxed, the rare wide ones pay an allocation each; a message is 34 bytes to copy.
enum ServerMessage: Equatable, Sendable {
    /// The answer to a good `hello`.
    indirect case welcome(Welcome)
    /// A game began: its first picture, and the plays left after the one it consumed.
    indirect case started(GameSnapshot, quota: QuotaStatus?)
    /// The whole picture of a game taken back after a reconnect.
    indirect case snapshot(GameSnapshot)
    /// One per step: the grid, lane, score, interval and the safe-lane cue. `haptic` is false
    /// for the step that crashed (the crash message carries that moment).
    case step(StepFrame, safeLanes: LaneSet, haptic: Bool)
    /// A lane change: the lane now and whether it is free in the row arriving next.
    case moved(lane: Lane, safe: Bool, haptic: Bool)
    /// A move into the edge: nothing changed, but the player must perceive it.
    case bump(Direction)
    /// A late move was honoured (the grace rule): the messages that follow replace what was
    /// sent for step `step`.
    case stepRevised(step: Int)
    case speedUpSoon(atScore: Int)
    case speedUp(interval: Int, stage: Int)
    case crash(kind: CrashKind, lane: Lane, step: Int, score: Int)
    /// The last message of a game, once it is saved (or failed to save).
    indirect case gameOver(GameResult)
    case paused(reason: PauseReason)
    case resumed(nextStepInMilliseconds: Int)
    /// This connection no longer has the game: the player took it back on another one.
    case detached(gameID: String)
    /// The player's settings changed on another device: the stored document as JSON.
    case settings(document: [UInt8])
    case pong
    indirect case error(ProtocolError, quota: QuotaStatus?)
    // Race rooms (docs/PROTOCOL.md "Race rooms"; written by RaceMessages.swift).
    /// A room as its receiver sees it (their seat in `you`).
    indirect case room(RoomView)
    indirect case roomLeft(code: RoomCode, reason: RoomLeftReason)
    indirect case countdown(code: RoomCode, startsInMilliseconds: Int)
    indirect case standings(code: RoomCode, racers: [RaceStandings.Entry])
    indirect case raceOver(RaceOutcome)
    indirect case queue(QueueView)
    /// The answer to `watch`: whose game, where it stands, and how many watch it now. The
    /// frames of the seat follow.
    indirect case watching(Watching)
    /// The watched game ended (its reason), or the watch did (`stopped`, `moved`).
    indirect case watchEnded(gameID: String, reason: String, score: Int)
    /// To a game's player (and every racer of its match): how many watch it now.
    case watchers(gameID: String, count: Int)
    // Replays and ghosts (docs/PROTOCOL.md, "Replays and ghosts").
    /// The answer to `replay`: the stored game, its picture at step 0; its frames follow.
    indirect case replaying(Replaying)
    /// Where a replay stands: after every control, and when it reaches the end.
    indirect case replayState(gameID: String, step: Int, playing: Bool, ended: Bool)
    /// The stored run beside a ghost race's player, one per ghost step.
    case ghost(step: Int, lane: Lane, score: Int, state: GhostState)

    /// A ghost's `state`: still going, crashed, or its stored game ended without a crash (its
    /// player quit or dropped; the ghost stops there).
    enum GhostState: String, Sendable {
        case racing
        case crashed
        case left
    }

    enum PauseReason: String, Sendable {
        /// The player asked. (A game whose connection dropped is paused too, but nobody is
        /// there to tell; the snapshot on return says `paused`.)
        case player
        /// The player's connection dropped: said to the game's watchers.
        case disconnected
    }

    struct Watching: Equatable, Sendable {
        var playerName: String?
        /// The race room the game is a seat of, if any.
        var room: String?
        var game: GameSnapshot
        var watchers: Int
    }

    struct Replaying: Equatable, Sendable {
        var playerName: String?
        var level: SpeedLevel
        /// What the stored game ended with.
        var score: Int
        var steps: Int
        var reason: GameEndReason
        /// The picture where the replay starts (step 0).
        var game: GameSnapshot
        var playing: Bool
    }

    /// The stored run a ghost race's player races (in `started.game`).
    struct GhostOf: Equatable, Sendable {
        var gameID: String
        var playerName: String?
        var score: Int
    }

    struct Welcome: Equatable, Sendable {
        var playerID: String
        var displayName: String
        var quota: QuotaStatus?
        /// The player's game that waits for `resume`, if any.
        var resumable: GameSnapshot?
        var limits: WebSocketLimits
        /// This server's `--node-id` when it is a node of a cluster (on PostgreSQL), so a client
        /// knows where it landed; nil (and the field left out) on a server on SQLite.
        var node: String? = nil
        /// Where this node's game connections are reached straight (`--game-url`), if set: a
        /// client that came through the site's front moves there.
        var gameURL: String? = nil
    }

    /// A game as a whole, for `started`, `snapshot` and `welcome`.
    struct GameSnapshot: Equatable, Sendable {
        var gameID: String
        var level: SpeedLevel
        var practice: Bool
        var step: Int
        var road: Road
        var lane: Lane
        var score: Int
        var interval: Int
        var speedStage: Int
        var safeLanes: LaneSet
        var paused: Bool
        /// Which road it runs on (`road`, and `day` for a daily one). No default: every picture
        /// (a live game's, a replay's) must say which road it is, or a daily game's reads `random`.
        var roadKind: GameRoad
        /// The code of the room whose race this game is, if it is one.
        var race: RoomCode? = nil
        /// A ghost race's stored run (nil for any other game).
        var ghost: GhostOf? = nil
    }

    struct GameResult: Equatable, Sendable {
        var gameID: String
        var reason: GameEndReason
        var score: Int
        var steps: Int
        var practice: Bool
        /// False when the database refused or failed: the score is not on any board.
        var saved: Bool
        /// Today, this week and all time for the game's level; empty for practice or unsaved.
        var standings: [LeaderboardStanding]
        var quota: QuotaStatus?
        /// A scored daily game's place on its day's board.
        var daily: DailyStanding? = nil
    }

    /// The `type` field of each message.
    var type: StaticString {
        switch self {
        case .welcome: "welcome"
        case .started: "started"
        case .snapshot: "snapshot"
        case .step: "step"
        case .moved: "moved"
        case .bump: "bump"
        case .stepRevised: "stepRevised"
        case .speedUpSoon: "speedUpSoon"
        case .speedUp: "speedUp"
        case .crash: "crash"
        case .gameOver: "gameOver"
        case .paused: "paused"
        case .resumed: "resumed"
        case .detached: "detached"
        case .settings: "settings"
        case .pong: "pong"
        case .error: "error"
        case .room: "room"
        case .roomLeft: "roomLeft"
        case .countdown: "countdown"
        case .standings: "standings"
        case .raceOver: "raceOver"
        case .queue: "queue"
        case .watching: "watching"
        case .watchEnded: "watchEnded"
        case .watchers: "watchers"
        case .replaying: "replaying"
        case .replayState: "replayState"
        case .ghost: "ghost"
        }
    }

    /// The message as JSON, after `headroom` zero bytes (libwebsockets' LWS_PRE).
    func encoded(headroom: Int = 0) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom)
        encode(into: &writer)
        return writer.bytes
    }

    func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.key("type")
        w.literal(type)
        switch self {
        case .welcome(let welcome):
            w.key("protocol"); w.string(WebSocketLimits.subprotocol)
            w.key("player")
            w.beginObject()
            w.key("id"); w.string(welcome.playerID)
            w.key("displayName"); w.string(welcome.displayName)
            w.endObject()
            w.key("quota"); Self.write(welcome.quota, into: &w)
            w.key("resumable")
            if let game = welcome.resumable { Self.write(game, into: &w) } else { w.null() }
            w.key("limits")
            w.beginObject()
            w.key("maxMessageBytes"); w.int(welcome.limits.maxMessageBytes)
            w.key("inputsPerSecond"); w.int(welcome.limits.inputsPerSecond)
            w.key("idleTimeoutSeconds"); w.int(welcome.limits.idleTimeoutSeconds)
            w.key("disconnectGraceSeconds"); w.int(welcome.limits.disconnectGraceSeconds)
            w.endObject()
            if let node = welcome.node { w.key("node"); w.string(node) }
            if let gameURL = welcome.gameURL { w.key("gameUrl"); w.string(gameURL) }
        case .started(let game, let quota):
            w.key("game"); Self.write(game, into: &w)
            w.key("quota"); Self.write(quota, into: &w)
        case .snapshot(let game):
            w.key("game"); Self.write(game, into: &w)
        case .step(let frame, let safeLanes, let haptic):
            w.key("step"); w.int(frame.step)
            w.key("grid"); Self.write(frame.road, into: &w)
            w.key("lane"); w.int(frame.lane.rawValue)
            w.key("score"); w.int(frame.score)
            w.key("interval"); w.int(frame.stepInterval)
            w.key("safeLanes"); Self.write(safeLanes, into: &w)
            if haptic { w.key("haptic"); w.literal("step") }
        case .moved(let lane, let safe, let haptic):
            w.key("lane"); w.int(lane.rawValue)
            w.key("safe"); w.bool(safe)
            if haptic { w.key("haptic"); w.literal("move") }
        case .bump(let direction):
            w.key("direction"); w.string(direction.rawValue)
            w.key("haptic"); w.literal("bump")
        case .stepRevised(let step):
            w.key("step"); w.int(step)
        case .speedUpSoon(let atScore):
            w.key("atScore"); w.int(atScore)
        case .speedUp(let interval, let stage):
            w.key("interval"); w.int(interval)
            w.key("stage"); w.int(stage)
        case .crash(let kind, let lane, let step, let score):
            w.key("kind"); w.string(kind.rawValue)
            w.key("lane"); w.int(lane.rawValue)
            w.key("step"); w.int(step)
            w.key("score"); w.int(score)
            w.key("haptic"); w.literal("crash")
        case .gameOver(let result):
            Self.write(result, into: &w)
        case .paused(let reason):
            w.key("reason"); w.string(reason.rawValue)
        case .resumed(let next):
            w.key("nextStepInMs"); w.int(next)
        case .detached(let gameID):
            w.key("gameId"); w.string(gameID)
            w.key("message"); w.string("This game continues on another connection of yours.")
        case .settings(let document):
            w.key("document"); w.raw(document)
        case .pong:
            break
        case .error(let error, let quota):
            w.key("code"); w.string(error.code.rawValue)
            w.key("message"); w.string(error.message)
            if let inReplyTo = error.inReplyTo { w.key("inReplyTo"); w.string(inReplyTo) }
            if let retryAfter = error.retryAfter { w.key("retryAfter"); w.int(retryAfter) }
            if let node = error.node { w.key("node"); w.string(node) }
            if let gameURL = error.gameURL { w.key("gameUrl"); w.string(gameURL) }
            if let resetsAt = error.resetsAt, quota == nil { w.key("resetsAt"); w.string(Self.timestamp(resetsAt)) }
            if let quota {
                w.key("quota"); Self.write(quota, into: &w)
                w.key("resetsAt"); w.string(Self.timestamp(quota.resetsAt))
                w.key("unlock"); w.string(WebSocketLimits.unlockPath)
            }
        case .room(let room):
            w.key("room"); RaceMessages.write(room, into: &w)
        case .roomLeft(let code, let reason):
            w.key("code"); w.string(code.text)
            w.key("reason"); w.string(reason.rawValue)
        case .countdown(let code, let startsIn):
            w.key("code"); w.string(code.text)
            w.key("startsInMs"); w.int(startsIn)
        case .standings(let code, let racers):
            w.key("code"); w.string(code.text)
            w.key("racers"); RaceMessages.write(racers, into: &w)
        case .raceOver(let outcome):
            RaceMessages.write(outcome, into: &w)
        case .queue(let queue):
            RaceMessages.write(queue, into: &w)
        case .watching(let watching):
            w.key("gameId"); w.string(watching.game.gameID)
            w.key("player")
            w.beginObject()
            w.key("name")
            if let name = watching.playerName { w.string(name) } else { w.null() }
            w.endObject()
            w.key("room")
            if let room = watching.room { w.string(room) } else { w.null() }
            w.key("game"); Self.write(watching.game, into: &w)
            w.key("watchers"); w.int(watching.watchers)
        case .watchEnded(let gameID, let reason, let score):
            w.key("gameId"); w.string(gameID)
            w.key("reason"); w.string(reason)
            w.key("score"); w.int(score)
        case .watchers(let gameID, let count):
            w.key("gameId"); w.string(gameID)
            w.key("count"); w.int(count)
        case .replaying(let replaying):
            w.key("gameId"); w.string(replaying.game.gameID)
            w.key("player")
            w.beginObject()
            w.key("name")
            if let name = replaying.playerName { w.string(name) } else { w.null() }
            w.endObject()
            w.key("level"); w.string(replaying.level.rawValue)
            w.key("score"); w.int(replaying.score)
            w.key("steps"); w.int(replaying.steps)
            w.key("reason"); w.string(replaying.reason.rawValue)
            w.key("game"); Self.write(replaying.game, into: &w)
            w.key("step"); w.int(replaying.game.step)
            w.key("playing"); w.bool(replaying.playing)
        case .replayState(let gameID, let step, let playing, let ended):
            w.key("gameId"); w.string(gameID)
            w.key("step"); w.int(step)
            w.key("playing"); w.bool(playing)
            w.key("ended"); w.bool(ended)
        case .ghost(let step, let lane, let score, let state):
            w.key("step"); w.int(step)
            w.key("lane"); w.int(lane.rawValue)
            w.key("score"); w.int(score)
            w.key("state"); w.string(state.rawValue)
        }
        w.endObject()
    }

    // MARK: - Parts

    private static func write(_ game: GameSnapshot, into w: inout JSONWriter) {
        w.beginObject()
        w.key("gameId"); w.string(game.gameID)
        w.key("level"); w.string(game.level.rawValue)
        w.key("practice"); w.bool(game.practice)
        w.key("step"); w.int(game.step)
        w.key("grid"); write(game.road, into: &w)
        w.key("lane"); w.int(game.lane.rawValue)
        w.key("score"); w.int(game.score)
        w.key("interval"); w.int(game.interval)
        w.key("speedStage"); w.int(game.speedStage)
        w.key("safeLanes"); write(game.safeLanes, into: &w)
        w.key("paused"); w.bool(game.paused)
        w.key("road"); w.string(game.roadKind.name)
        if let day = game.roadKind.day { w.key("day"); w.string(day.text) }
        if let race = game.race { w.key("race"); w.string(race.text) }
        if let ghost = game.ghost {
            w.key("ghost")
            w.beginObject()
            w.key("gameId"); w.string(ghost.gameID)
            w.key("name")
            if let name = ghost.playerName { w.string(name) } else { w.null() }
            w.key("score"); w.int(ghost.score)
            w.endObject()
        }
        w.endObject()
    }

    private static func write(_ result: GameResult, into w: inout JSONWriter) {
        w.key("gameId"); w.string(result.gameID)
        w.key("reason"); w.string(result.reason.rawValue)
        w.key("score"); w.int(result.score)
        w.key("steps"); w.int(result.steps)
        w.key("practice"); w.bool(result.practice)
        w.key("saved"); w.bool(result.saved)
        // The headline figures are all time; the three boards follow in full.
        let allTime = result.standings.first { $0.period == .allTime }
        w.key("personalBest"); if let allTime { w.int(allTime.personalBest) } else { w.null() }
        w.key("newBest"); w.bool(allTime?.isNewBest ?? false)
        w.key("rank"); if let allTime { w.int(allTime.rank) } else { w.null() }
        w.key("standings")
        w.beginObject()
        for standing in result.standings {
            w.key(periodKey(standing.period))
            w.beginObject()
            w.key("period"); w.string(standing.periodKey)
            w.key("best"); w.int(standing.personalBest)
            w.key("newBest"); w.bool(standing.isNewBest)
            w.key("rank"); w.int(standing.rank)
            w.endObject()
        }
        w.endObject()
        w.key("quota"); write(result.quota, into: &w)
        w.key("daily")
        if let daily = result.daily {
            w.beginObject()
            w.key("day"); w.string(daily.day.text)
            w.key("best"); w.int(daily.best)
            w.key("rank"); w.int(daily.rank)
            w.endObject()
        } else {
            w.null()
        }
    }

    private static func periodKey(_ period: LeaderboardPeriod) -> StaticString {
        switch period {
        case .today: "today"
        case .thisWeek: "thisWeek"
        case .allTime: "allTime"
        }
    }

    private static func write(_ quota: QuotaStatus?, into w: inout JSONWriter) {
        if let quota { w.object(QuotaJSON(quota)) } else { w.null() }
    }

    /// Rows top first, each `[left, middle, right]` with 1 for a car: the last row is the
    /// player's.
    private static func write(_ road: Road, into w: inout JSONWriter) {
        w.beginArray()
        for index in 0..<Road.rowCount {
            let row = road.row(index)
            var pattern = 0
            for (bit, lane) in Lane.allCases.enumerated() where row.contains(lane) { pattern |= 1 << bit }
            w.raw(rowJSON[pattern])
        }
        w.endArray()
    }

    /// A row's JSON by its lanes as bits (left = 1, middle = 2, right = 4): "[0,0,0]" to
    /// "[1,1,1]". Every step writes every row, so each is written whole rather than number by
    /// number.
    private static let rowJSON: [[UInt8]] = (0..<8).map { pattern in
        Array("[\(pattern & 1),\(pattern >> 1 & 1),\(pattern >> 2 & 1)]".utf8)
    }

    private static func write(_ lanes: LaneSet, into w: inout JSONWriter) {
        w.beginArray()
        for lane in Lane.allCases where lanes.contains(lane) { w.int(lane.rawValue) }
        w.endArray()
    }

    /// `2026-01-16T00:00:00Z`, as the HTTP API writes times.
    static func timestamp(_ date: Date) -> String {
        date.formatted(timeStyle)
    }

    private static let timeStyle = Date.ISO8601FormatStyle(timeZone: .gmt)
}
