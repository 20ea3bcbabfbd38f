import RetroRapidRules
import RetroRapidDomain

/// A stored game played again: the engine re-run from its seed, level and input log at the
/// game's own real-time intervals, producing the messages its player got. A replay (watchers
/// only) or the ghost of a ghost race (only its lane and score, as `ghost` messages).
///
/// What comes out is what the player got: the same `step` frames byte for byte, and the same
/// `moved`, `bump`, `speedUpSoon`, `speedUp` and `crash` messages. The moves the log records
/// after step n are applied just before step n + 1, as `Replay` does (the log keeps which step
/// a move followed, not when). What the log does not keep is not replayed: a late move the
/// grace rule honoured is in the log as the move it became, so the replay shows the revised
/// step only (no `stepRevised`, no first version of that step); the player's pauses are not
/// in it either.
///
/// Pure like `GameSession`: no sockets, no clock. Every call takes `now` (µs, monotonic);
/// the host asks `wakeAt` when to call `tick`.
final class ReplaySession {
    enum Mode: Equatable {
        /// Every frame, plus `replayState` when the end is reached.
        case replay
        /// Only a `ghost` message per step (its lane, score and state).
        case ghost
    }

    /// The stored game's public id.
    let gameID: String
    let level: SpeedLevel
    let seed: UInt64
    let log: InputLog
    let practice: Bool
    /// The road the stored game ran on (`daily` with its day, `ghost`, `random`): the replay's
    /// picture names it as the live game's `started` did.
    let road: GameRoad
    /// How the stored game ended: a game that did not crash (quit, dropped, shutdown) ends its
    /// replay after its last step, its ghost as `left`.
    let endReason: GameEndReason
    let mode: Mode
    /// The position: the state after `state.step` steps and the moves before them.
    private(set) var state: GameState
    /// The next move of `log` to apply (those after `state.step` wait for the next tick).
    private var nextMove: Int
    /// Stepping on (true) or held (paused, or at the end).
    private(set) var playing: Bool
    /// The log is played out: no step or move is left. A seek back goes on from there.
    private(set) var ended: Bool
    /// The next step's absolute deadline while playing: each is the one before plus the
    /// interval, as in `GameSession`, so a replay keeps the live game's rhythm.
    private var nextStepAt: Int64

    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The stored input log is not one this server wrote.
        case badLog(String)
        /// The stored game cannot be re-run by this build (another rules version, or a log
        /// that does not replay).
        case notReplayable(Replay.Failure)

        var description: String {
            switch self {
            case .badLog(let reason): reason
            case .notReplayable(let failure): failure.description
            }
        }
    }

    /// A replay (or ghost) of `record` whose step 1 comes one interval after `now`. The log is
    /// replayed once here, so a log that cannot be replayed is refused up front, never half-way.
    convenience init(record: GameRecord, mode: Mode, now: Int64) throws(Failure) {
        let log: InputLog
        do {
            log = try InputLog(encoded: record.inputLog)
        } catch {
            throw .badLog(error.description)
        }
        try self.init(gameID: record.displayID, level: record.level, seed: record.seed, log: log,
                      rulesVersion: record.rulesVersion, practice: record.practice, road: record.road,
                      endReason: record.endReason, mode: mode, now: now)
    }

    init(gameID: String, level: SpeedLevel, seed: UInt64, log: InputLog, rulesVersion: Int = GameRules.version,
         practice: Bool, road: GameRoad = .random, endReason: GameEndReason, mode: Mode, now: Int64) throws(Failure) {
        do {
            _ = try Replay.run(seed: seed, level: level, log: log, rulesVersion: rulesVersion)
        } catch {
            throw .notReplayable(error)
        }
        self.gameID = gameID
        self.level = level
        self.seed = seed
        self.log = log
        self.practice = practice
        self.road = road
        self.endReason = endReason
        self.mode = mode
        state = GameState(seed: seed, level: level)
        nextMove = 0
        playing = true
        ended = false
        nextStepAt = now + Int64(state.stepInterval) * 1000
        if isPlayedOut { ended = true; playing = false }
    }

    /// The step the replay is at.
    var step: Int { state.step }

    /// The stored game's steps: the last step a seek may name.
    var lastStep: Int { log.steps }

    /// When `tick` must next be called: the next step (or the moves after the last one) while
    /// playing; nil while paused or at the end.
    var wakeAt: Int64? { playing ? nextStepAt : nil }

    /// A ghost is over at the end of its log. A replay never is: at the end it is held (a seek
    /// still works), and its match goes when its last watcher does (`ReplayHost`).
    var isOver: Bool { mode == .ghost && ended }

    /// The picture at the current position, as `started` and `snapshot` carry it; `paused` is
    /// whether the replay is held.
    var snapshot: ServerMessage.GameSnapshot {
        ServerMessage.GameSnapshot(
            gameID: gameID, level: level, practice: practice, step: state.step, road: state.road,
            lane: state.lane, score: state.score, interval: state.stepInterval, speedStage: state.speedStage,
            safeLanes: state.isOver ? .none : state.safeLanes, paused: !playing, roadKind: road)
    }

    /// `replayState` as it stands.
    var replayState: ServerMessage {
        .replayState(gameID: gameID, step: state.step, playing: playing, ended: ended)
    }

    // MARK: - Time

    /// Does what is due at `now`: the moves the log has after the current step, then the next
    /// step. On the tick that plays the log out a replay adds its `replayState` (`ended`), and
    /// a ghost's output says it ended (the stored game's reason), so its host ends the seat.
    func tick(now: Int64) -> GameSession.Output {
        guard playing, now >= nextStepAt else { return GameSession.Output() }
        var sink = GameEventMessages()
        advance(into: &sink)
        var next = nextStepAt + Int64(state.stepInterval) * 1000
        if next <= now { next = now + Int64(state.stepInterval) * 1000 }  // fell behind: no burst
        nextStepAt = next
        var messages: [ServerMessage]
        switch mode {
        case .replay: messages = sink.messages
        case .ghost: messages = [ghostMessage]
        }
        guard isPlayedOut else { return GameSession.Output(messages: messages) }
        ended = true
        playing = false
        guard mode == .ghost else { return GameSession.Output(messages: messages + [replayState]) }
        return GameSession.Output(messages: messages, ended: endReason)
    }

    /// One position on: the moves recorded after this step, then the next step (if the log
    /// has one and the game is still on).
    private func advance<Sink: GameEventSink>(into sink: inout Sink) {
        applyMoves(into: &sink)
        if !state.isOver, state.step < log.steps {
            state.advance(into: &sink)
        }
    }

    private func applyMoves<Sink: GameEventSink>(into sink: inout Sink) {
        let moves = log.moves
        // `Replay.run` accepted the log in `init`: no move comes after the game ended.
        while nextMove < moves.endIndex, moves[nextMove].afterStep == state.step, !state.isOver {
            state.move(moves[nextMove].direction, into: &sink)
            nextMove += 1
        }
    }

    /// No step and no move of the log left to play.
    private var isPlayedOut: Bool {
        state.isOver || (state.step == log.steps && nextMove == log.moves.endIndex)
    }

    private var ghostMessage: ServerMessage {
        let ghostState: ServerMessage.GhostState =
            if state.isOver { .crashed } else if isPlayedOut { .left } else { .racing }
        return .ghost(step: state.step, lane: state.lane, score: state.score, state: ghostState)
    }

    // MARK: - Controls

    /// Holds the replay where it is. Pausing a paused (or ended) replay changes nothing.
    func pause(now: Int64) {
        playing = false
    }

    /// Plays on from where it is, the next step a whole interval from now (as a resumed game).
    /// At the end a replay starts again from step 0: what a player pressing play there
    /// expects (a ghost that ended stays ended). Returns whether it went back to the start
    /// (then the client needs a `snapshot`).
    @discardableResult
    func play(now: Int64) -> Bool {
        var restarted = false
        if ended {
            guard mode == .replay else { return false }
            rewind(to: 0)
            restarted = true
        }
        if !playing, !ended {  // an empty log has nothing to play even from the start
            playing = true
            nextStepAt = now + Int64(state.stepInterval) * 1000
        }
        return restarted
    }

    /// Goes to step `step` (0 to `lastStep`) by re-running the game from step 0: the state
    /// the live game had just after that step, before the moves that followed it. Playing or
    /// held as before (a replay that had ended is held); the next step a whole interval from
    /// now. Returns the picture there.
    func seek(step target: Int, now: Int64) -> Result<ServerMessage.GameSnapshot, ProtocolError> {
        guard (0...log.steps).contains(target) else {
            return .failure(ProtocolError(.stepOutOfRange,
                "\"step\" must be from 0 to \(log.steps), the last step of game \(gameID); got \(target)."))
        }
        rewind(to: target)
        if playing { nextStepAt = now + Int64(state.stepInterval) * 1000 }
        return .success(snapshot)
    }

    /// The position after `target` steps, replayed from the start.
    private func rewind(to target: Int) {
        state = GameState(seed: seed, level: level)
        nextMove = 0
        var sink = DiscardingSink()
        while state.step < target, !state.isOver {
            applyMoves(into: &sink)
            state.advance(into: &sink)
        }
        ended = isPlayedOut
        if ended { playing = false }
    }
}

extension ReplaySession: MatchSeatDriver {}
