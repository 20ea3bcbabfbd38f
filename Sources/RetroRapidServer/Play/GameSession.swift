import Foundation
import RetroRapidRules
import RetroRapidDomain

/// One player's running game as the server drives it: the engine (`Game`) plus time. It says
/// when the next step is due, pauses for the player or for a dropped connection (with a
/// deadline to come back), holds a crash step's messages for the grace window, and turns
/// everything into the messages the client gets.
///
/// Pure: no sockets, no clock, no database. Every call takes `now` in microseconds of a
/// monotonic clock and returns what to send; `MatchHost` owns the session (in its `Match`) on the service
/// thread, asks `wakeAt` when to call `tick`, and saves the game when it ends.
final class GameSession {
    /// The scheduler's key for this session (unique while the server runs).
    let id: Int
    /// The game's public id: in messages, and in the `plays` row its start consumed.
    let gameID: String
    let playerID: Int64
    /// Wall-clock start, for the stored game.
    let startedAt: Date
    /// Which road it runs on: set by its starter (the daily road's start, a ghost race) before
    /// the first message; shown in snapshots and stored with the game.
    var road: GameRoad = .random
    /// The race room whose race this game is (set by `RoomHost.launch`): every snapshot names
    /// it, so a player who reloads (`welcome.resumable`) or takes it back knows it is a race.
    var race: RoomCode?
    private(set) var game: Game
    // Two Bools here, in the tail of `game` (its size is not a multiple of 8), and the
    // optional `runningSince` last: no padding after each (one session per running game, so
    // padding counts as many times as games).
    let practice: Bool
    /// Whether the client was sent messages for the current step. A late move that revises a
    /// step the client never saw (its crash was held) needs no `stepRevised`.
    private var currentStepSent = true
    private(set) var phase: Phase

    enum Phase: Equatable {
        case running
        case paused(PauseCause)
        /// The last step crashed, but a late move may still undo it: its messages wait until
        /// `until`, the end of the grace window.
        case crashHeld(until: Int64)
        /// Finished; the hub saves it and sends `gameOver`.
        case over(GameEndReason)
    }

    enum PauseCause: Equatable {
        case player
        /// The connection dropped; at `deadline` the game ends as abandoned.
        case disconnected(deadline: Int64)
    }

    /// What a call produced: messages for the player's connection, and whether the game ended
    /// (then the hub saves it).
    struct Output: Equatable {
        var messages: [ServerMessage] = []
        var ended: GameEndReason?
    }

    /// The configured grace window; the engine's own (≤ 150 ms, ≤ half a step) caps it.
    private let graceLimitMilliseconds: Int
    /// When the current step was computed (the grace rule measures from it).
    private var lastStepAt: Int64
    /// The next step's absolute deadline: each is the one before plus the interval, never
    /// "now + interval", so steps do not drift.
    private var nextStepAt: Int64
    /// Held messages of a crash step (see `Phase.crashHeld`).
    private var held: [ServerMessage] = []
    /// How long after its deadline the last step was taken (µs): the server's own share of
    /// the step jitter players feel (`retrorapid_game_step_lateness_seconds`).
    private(set) var lastStepLateness: Int64 = 0
    /// When the game starts: its creation, or a race's start deadline still to come
    /// (`RoomHost.launch`). A game resumed before it keeps it (`resume`).
    private let startsAt: Int64
    /// Play time so far, pauses excluded (and since when it is running: `runningSince`).
    private var playedMicroseconds: Int64 = 0
    /// The log's size (steps, moves) at the last checkpoint the database confirmed.
    private var checkpointed: LogSize = LogSize(steps: 0, moves: 0)
    /// Since when the play time is running (nil while paused or over).
    private var runningSince: Int64?

    /// Enough of an input log to tell whether it changed: it only grows, but for the grace
    /// rule taking back a step, which always comes with a move.
    struct LogSize: Equatable {
        var steps: Int
        var moves: Int
    }

    init(id: Int, gameID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, practice: Bool,
         graceLimitMilliseconds: Int, startedAt: Date, now: Int64) {
        self.id = id
        self.gameID = gameID
        self.playerID = playerID
        self.practice = practice
        self.startedAt = startedAt
        self.graceLimitMilliseconds = graceLimitMilliseconds
        game = Game(seed: seed, level: level)
        phase = .running
        startsAt = now
        lastStepAt = now
        nextStepAt = now + Int64(game.state.stepInterval) * 1000
        runningSince = now
    }

    /// The most play time a game rebuilt from its checkpoints brings along: ten years, far
    /// beyond any game, and far enough below `Int64.max` µs that adding to it cannot overflow.
    static let maximumResumedMilliseconds = 10 * 366 * 86_400_000

    /// A game that moved here from another node, rebuilt from its checkpointed log (`game`,
    /// paused): it waits for its player until `deadline`, as after a dropped connection. The
    /// log it was rebuilt from is in the database already, so its next checkpoint appends.
    init(id: Int, gameID: String, playerID: Int64, resuming game: Game, practice: Bool, graceLimitMilliseconds: Int,
         startedAt: Date, playedMilliseconds: Int, now: Int64, deadline: Int64) {
        self.id = id
        self.gameID = gameID
        self.playerID = playerID
        self.practice = practice
        self.startedAt = startedAt
        self.graceLimitMilliseconds = graceLimitMilliseconds
        self.game = game
        phase = .paused(.disconnected(deadline: deadline))
        startsAt = now
        lastStepAt = now
        nextStepAt = now + Int64(game.state.stepInterval) * 1000
        // The checkpoints' duration, read back from the database: bounded before it is
        // multiplied, as a damaged row's could overflow in microseconds and trap.
        playedMicroseconds = Int64(min(max(0, playedMilliseconds), Self.maximumResumedMilliseconds)) * 1000
        runningSince = nil
        checkpointed = LogSize(steps: game.log.steps, moves: game.log.moves.count)
    }

    /// When `tick` must next be called: the next step, the end of a held crash's grace, or
    /// the end of a dropped connection's wait. Nil when nothing is due (paused, or over).
    var wakeAt: Int64? {
        switch phase {
        case .running: nextStepAt
        case .crashHeld(let until): until
        case .paused(.disconnected(let deadline)): deadline
        case .paused(.player), .over: nil
        }
    }

    var isOver: Bool {
        if case .over = phase { true } else { false }
    }

    var isDisconnected: Bool {
        if case .paused(.disconnected) = phase { true } else { false }
    }

    /// The whole picture, for `started`, `snapshot` and `welcome`.
    var snapshot: ServerMessage.GameSnapshot {
        let state = game.state
        var paused = false
        if case .paused = phase { paused = true }
        return ServerMessage.GameSnapshot(
            gameID: gameID, level: state.level, practice: practice, step: state.step, road: state.road,
            lane: state.lane, score: state.score, interval: state.stepInterval, speedStage: state.speedStage,
            safeLanes: state.isOver ? .none : state.safeLanes, paused: paused, roadKind: road, race: race)
    }

    // MARK: - Time

    /// Does what is due at `now`: a step, the release of a held crash, or the end of a wait.
    func tick(now: Int64) -> Output { tick(now: now, reusing: []) }

    /// `tick(now:)`, the step's messages written into `buffer`'s storage (see `MatchHost.tick`).
    func tick(now: Int64, reusing buffer: consuming [ServerMessage]) -> Output {
        switch phase {
        case .running where now >= nextStepAt:
            return step(now: now, reusing: buffer)
        case .crashHeld(let until) where now >= until:
            return releaseHeldCrash(now: now)
        case .paused(.disconnected(let deadline)) where now >= deadline:
            return end(.abandoned, now: now)
        default:
            return Output()
        }
    }

    /// `buffer`: an array whose storage the step's messages may take (see `MatchHost.tick`).
    private func step(now: Int64, reusing buffer: consuming [ServerMessage]) -> Output {
        var sink = GameEventMessages(reusing: buffer)
        do {
            try game.step(into: &sink)
        } catch {
            return Output()  // not reached: `phase` is `.running` only while the engine runs
        }
        lastStepAt = now
        lastStepLateness = max(0, now - nextStepAt)
        // The schedule goes on from the deadline, not from now; a server that fell a whole
        // step behind starts again from now rather than sending a burst of steps.
        var next = nextStepAt + Int64(game.state.stepInterval) * 1000
        if next <= now { next = now + Int64(game.state.stepInterval) * 1000 }
        nextStepAt = next
        guard sink.gameEnded else {
            currentStepSent = true
            return Output(messages: sink.messages)
        }
        let window = graceWindowMilliseconds
        guard window > 0 else {
            return finish(.crash, now: now, messages: sink.messages)
        }
        // A crash from ahead: a late move may still undo it, so say nothing until the window
        // has passed (GAME_RULES.md, "Latency grace rule").
        held = sink.messages
        currentStepSent = false
        phase = .crashHeld(until: now + Int64(window) * 1000)
        return Output()
    }

    private func releaseHeldCrash(now: Int64) -> Output {
        let messages = held
        held = []
        return finish(.crash, now: now, messages: messages)
    }

    /// The window the grace rule uses now: the configured limit, capped by the engine's.
    private var graceWindowMilliseconds: Int {
        min(graceLimitMilliseconds, game.graceWindow)
    }

    // MARK: - Player input

    /// A move or pause before the game's start deadline (a race's countdown: its sessions
    /// start at the deadline) is refused `not_started`; a solo game starts when it is made.
    private func refusalBeforeStart(now: Int64) -> ProtocolError? {
        guard now < startsAt else { return nil }
        return ProtocolError(.notStarted, "The race starts in \(max(1, (startsAt - now) / 1000)) ms; wait for the first step.")
    }

    /// A move by a player who had seen step `seenStep`.
    func move(_ direction: Direction, seenStep: Int, now: Int64) -> Result<Output, ProtocolError> {
        if let early = refusalBeforeStart(now: now) { return .failure(early) }
        switch phase {
        case .over:
            return .failure(ProtocolError(.gameOver, "The game is over; start a new one."))
        case .paused:
            return .failure(ProtocolError(.paused, "The game is paused; resume it first."))
        case .running, .crashHeld:
            break
        }
        guard seenStep >= 0 else {
            return .failure(ProtocolError(.stepOutOfRange, "\"step\" must be 0 or more, the number of the last step message seen; got \(seenStep)."))
        }
        let elapsed = Int((now - lastStepAt) / 1000)
        // Past the configured window (or with none) the move is late whatever the engine's
        // own window says.
        let graced = graceLimitMilliseconds > 0 && elapsed <= graceLimitMilliseconds
        let millisecondsSinceStep = graced ? elapsed : Int.max
        var sink = GameEventMessages()
        let stepBefore = game.state.step
        let timing: Game.MoveTiming
        do {
            timing = try game.move(direction, seenStep: seenStep, millisecondsSinceStep: millisecondsSinceStep, into: &sink)
        } catch {
            switch error {
            case .stepNotReached(let seen, let current):
                return .failure(ProtocolError(.stepOutOfRange, "The move names step \(seen), but the game is at step \(current)."))
            case .gameOver:
                // Any move but a graced one closes the window: a held crash stands.
                if case .crashHeld = phase { return .success(releaseHeldCrash(now: now)) }
                return .failure(ProtocolError(.gameOver, "The game is over; start a new one."))
            case .paused:
                return .failure(ProtocolError(.paused, "The game is paused; resume it first."))
            }
        }
        if timing == .graced {
            return .success(afterGracedMove(sink, revisedStep: stepBefore, now: now))
        }
        if sink.gameEnded {
            return .success(finish(.crash, now: now, messages: sink.messages))  // into a car, sideways
        }
        return .success(Output(messages: sink.messages))
    }

    /// A late move rewound the last step (it was step `revisedStep`) and ran it again.
    private func afterGracedMove(_ sink: GameEventMessages, revisedStep: Int, now: Int64) -> Output {
        var sink = sink
        if !currentStepSent { sink.dropStepRevised() }
        guard sink.gameEnded else {
            // Saved by the late move: the step stands as revised; the schedule is unchanged.
            held = []
            phase = .running
            currentStepSent = true
            return Output(messages: sink.messages)
        }
        if game.state.step < revisedStep {
            // The late move itself went into a car: that step never happened, and it is final.
            held = []
            return finish(.crash, now: now, messages: sink.messages)
        }
        // The step ran again and crashed: provisional until the same window ends. What the
        // client saw of this step stays as it was, so `currentStepSent` does not change.
        held = sink.messages
        if case .crashHeld = phase { return Output() }
        phase = .crashHeld(until: lastStepAt + Int64(graceWindowMilliseconds) * 1000)
        return Output()
    }

    func pause(now: Int64) -> Result<Output, ProtocolError> {
        if let early = refusalBeforeStart(now: now) { return .failure(early) }
        switch phase {
        case .over:
            return .failure(ProtocolError(.gameOver, "The game is over."))
        case .paused:
            return .failure(ProtocolError(.alreadyPaused, "The game is already paused."))
        case .crashHeld:
            // A pause closes the grace window (no rewinding across a pause): the crash stands.
            return .success(releaseHeldCrash(now: now))
        case .running:
            var sink = GameEventMessages()
            try? game.pause(into: &sink)
            stopClock(now: now)
            phase = .paused(.player)
            return .success(Output(messages: sink.messages))
        }
    }

    func resume(now: Int64) -> Result<Output, ProtocolError> {
        switch phase {
        case .over:
            return .failure(ProtocolError(.gameOver, "The game is over."))
        case .running, .crashHeld:
            return .failure(ProtocolError(.notPaused, "The game is not paused."))
        case .paused:
            var sink = DiscardingSink()
            try? game.resume(into: &sink)
            phase = .running
            let interval = Int64(game.state.stepInterval) * 1000
            if now < startsAt {
                // Back before a race's start deadline: the first step stays one interval after
                // it, as every other racer's, and the countdown is no play time.
                runningSince = startsAt
                nextStepAt = startsAt + interval
            } else {
                // A whole interval from now: a player coming back gets a full step to find their bearings.
                runningSince = now
                nextStepAt = now + interval
            }
            return .success(Output(messages: [.resumed(nextStepInMilliseconds: Int((nextStepAt - now) / 1000))]))
        }
    }

    /// The connection dropped: a running or paused game waits until `deadline` for the player.
    /// A held crash goes on to its end; a finished game is left as it is.
    func detach(now: Int64, deadline: Int64) {
        switch phase {
        case .running:
            var sink = DiscardingSink()
            try? game.pause(into: &sink)
            stopClock(now: now)
            phase = .paused(.disconnected(deadline: deadline))
        case .paused:
            phase = .paused(.disconnected(deadline: deadline))
        case .crashHeld, .over:
            break
        }
    }

    /// The player is back on a connection: the game stays paused until they `resume`.
    func attach() {
        if case .paused(.disconnected) = phase { phase = .paused(.player) }
    }

    /// Ends the game now for `reason` (quit, shutdown, abandoned). A held crash ends as the
    /// crash it is. Returns the messages still owed (a held crash) and the end.
    func end(_ reason: GameEndReason, now: Int64) -> Output {
        switch phase {
        case .over:
            return Output()
        case .crashHeld:
            return releaseHeldCrash(now: now)
        case .running, .paused:
            return finish(reason, now: now, messages: [])
        }
    }

    private func finish(_ reason: GameEndReason, now: Int64, messages: [ServerMessage]) -> Output {
        stopClock(now: now)
        phase = .over(reason)
        currentStepSent = true
        return Output(messages: messages, ended: reason)
    }

    private func stopClock(now: Int64) {
        if let since = runningSince {
            playedMicroseconds += max(0, now - since)
            runningSince = nil
        }
    }

    // MARK: - Saving

    /// What changed since the last checkpoint the database confirmed, for the periodic one:
    /// the step count and the moves made since. Nil when nothing changed (a paused game costs
    /// nothing) or the game is over (it is being saved whole). `full` asks for the whole log,
    /// changed or not, over or not (the compaction, `CheckpointWriter.swift`): the compaction
    /// deletes what came before it of every game it covers, and a game being saved is only
    /// gone once its save commits.
    func checkpoint(now: Int64, full: Bool = false) -> (GameCheckpoint, LogSize)? {
        guard full || !isOver else { return nil }
        let log = game.log
        let size = LogSize(steps: log.steps, moves: log.moves.count)
        guard full || size != checkpointed else { return nil }
        var played = playedMicroseconds
        if let since = runningSince { played += max(0, now - since) }
        // Moves are only ever appended, so those since the last checkpoint are the log's tail.
        let movesBefore = full ? 0 : checkpointed.moves
        let checkpoint = GameCheckpoint(publicID: gameID, steps: log.steps, movesBefore: movesBefore,
                                        moves: Array(log.moves[movesBefore...]), durationMilliseconds: Int(played / 1000))
        return (checkpoint, size)
    }

    /// The database has the checkpoint of this size.
    func checkpointSaved(_ size: LogSize) {
        checkpointed = size
    }

    /// The finished game as `GameRepository.record` takes it.
    func record(endedAt: Date) -> NewGame {
        let reason: GameEndReason = if case .over(let reason) = phase { reason } else { .abandoned }
        // Monotonic play time can exceed the wall-clock span by a hair; the store checks it.
        let wall = max(0, Int(endedAt.timeIntervalSince(startedAt) * 1000))
        return NewGame(
            publicID: gameID, playerID: playerID, level: game.state.level, seed: game.seed, inputLog: game.log,
            score: game.state.score, steps: game.state.step, endReason: reason, practice: practice,
            startedAt: startedAt, endedAt: endedAt,
            durationMilliseconds: min(Int(playedMicroseconds / 1000), wall), road: road)
    }
}
