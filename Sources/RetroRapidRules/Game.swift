/// A game as the server runs it: the rules (`GameState`) plus pause and resume, the
/// input log, and the latency grace rule. Still pure: the caller says when steps
/// happen and how late a move arrived, so a game is a function of (seed, level,
/// ordered inputs) and `Replay` can re-run it from the log alone.
public struct Game: Sendable {
    public let seed: UInt64
    public private(set) var state: GameState
    public private(set) var log = InputLog()
    public private(set) var isPaused = false

    /// The state just before the last step, kept while a late move may still rewind it.
    private var beforeLastStep: GameState?

    public enum InputError: Error, Equatable, CustomStringConvertible {
        case gameOver
        case paused
        /// A move that claims a step the game has not reached.
        case stepNotReached(seen: Int, current: Int)

        public var description: String {
            switch self {
            case .gameOver: "the game is over"
            case .paused: "the game is paused; resume it first"
            case .stepNotReached(let seen, let current): "move is for step \(seen) but the game is at step \(current)"
            }
        }
    }

    /// How a move was applied.
    public enum MoveTiming: Equatable, Sendable {
        /// Against the step the game is at.
        case onTime
        /// Late, within the grace window: applied before the last step, which was then re-run.
        case graced
        /// Late, outside the window: applied now.
        case late
    }

    public init(seed: UInt64, level: SpeedLevel) {
        self.seed = seed
        state = GameState(seed: seed, level: level)
    }

    /// The game `log` describes, rebuilt by replaying it (`Replay`), paused, its log going on
    /// from `log`: how a game moves to another server (a game is a pure function of seed,
    /// level and input log).
    public init(resuming log: InputLog, seed: UInt64, level: SpeedLevel, rulesVersion: Int = GameRules.version) throws(Replay.Failure) {
        self.seed = seed
        state = try Replay.run(seed: seed, level: level, log: log, rulesVersion: rulesVersion)
        self.log = log
        isPaused = !state.isOver
    }

    /// A game from a scene built with `GameState`'s scene initialiser (tests).
    init(seed: UInt64, state: GameState) {
        self.seed = seed
        self.state = state
    }

    /// The longest a move may arrive after the step it missed and still be graced:
    /// `GameRules.latencyGraceMilliseconds`, never more than half a step.
    public var graceWindow: Int {
        min(GameRules.latencyGraceMilliseconds, (beforeLastStep?.stepInterval ?? state.stepInterval) / 2)
    }

    /// Takes one step (the caller's timer decides when).
    public mutating func step<Sink: GameEventSink>(into sink: inout Sink) throws(InputError) {
        guard !state.isOver else { throw .gameOver }
        guard !isPaused else { throw .paused }
        beforeLastStep = state
        state.advance(into: &sink)
        log.recordStep()
    }

    /// Applies a move made by a player who had seen step `seenStep`.
    ///
    /// The grace rule: if they had seen only the step before the current one, the move
    /// arrived at most `graceWindow` ms after the current step was computed, and no
    /// move has been made since that step, then the move is applied as if it came in
    /// time and the step is computed again (announced by `.stepRevised`). A crash in
    /// that step is therefore provisional for `graceWindow` ms: a server that honours
    /// late moves holds a crash step's events that long before sending them.
    /// It cannot show the future: the road does not depend on moves, the rewind is one
    /// step and at most half a step long, and it only re-decides what that step did.
    @discardableResult
    public mutating func move<Sink: GameEventSink>(
        _ direction: Direction,
        seenStep: Int,
        millisecondsSinceStep: Int = 0,
        into sink: inout Sink
    ) throws(InputError) -> MoveTiming {
        guard seenStep <= state.step else { throw .stepNotReached(seen: seenStep, current: state.step) }
        if !isPaused, let before = beforeLastStep, seenStep == state.step - 1,
           millisecondsSinceStep >= 0, millisecondsSinceStep <= graceWindow {
            let revisedStep = state.step
            sink.receive(.stepRevised(step: revisedStep))
            var revised = before
            revised.move(direction, into: &sink)
            log.recordMove(direction, afterStep: revisedStep - 1)
            if revised.isOver {
                // The late move itself crashed, sideways, so the step never happened.
                log.revokeLastStep()
                beforeLastStep = nil
            } else {
                beforeLastStep = revised
                revised.advance(into: &sink)
            }
            state = revised
            return .graced
        }
        guard !state.isOver else { throw .gameOver }
        guard !isPaused else { throw .paused }
        beforeLastStep = nil // a move on this step closes the grace window for the last one
        state.move(direction, into: &sink)
        log.recordMove(direction, afterStep: state.step)
        return seenStep == state.step ? .onTime : .late
    }

    public mutating func pause<Sink: GameEventSink>(into sink: inout Sink) throws(InputError) {
        guard !state.isOver else { throw .gameOver }
        guard !isPaused else { return }
        isPaused = true
        beforeLastStep = nil // no rewinding across a pause
        sink.receive(.paused)
    }

    public mutating func resume<Sink: GameEventSink>(into sink: inout Sink) throws(InputError) {
        guard !state.isOver else { throw .gameOver }
        guard isPaused else { return }
        isPaused = false
        sink.receive(.resumed)
    }
}
