/// Re-simulates a stored game from its seed, level and input log. Because the rules
/// are pure and the road depends only on the seed, this reaches exactly the state
/// (and score) the live game reached; `retrorapid verify` uses it to check stored scores.
public enum Replay {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case unsupportedRulesVersion(Int)
        /// The log has inputs after the game had already ended (at `step`).
        case inputAfterGameOver(step: Int)
        /// A move is tagged with a step after the log's last one.
        case moveAfterLastStep(afterStep: Int, lastStep: Int)

        public var description: String {
            switch self {
            case .unsupportedRulesVersion(let version):
                "this build plays rules version \(GameRules.version), not \(version)"
            case .inputAfterGameOver(let step):
                "the input log goes on after the game ended at step \(step)"
            case .moveAfterLastStep(let afterStep, let lastStep):
                "the input log has a move after step \(afterStep) but only \(lastStep) steps"
            }
        }
    }

    /// The final state of the game the log describes, with every event sent to `sink`.
    public static func run<Sink: GameEventSink>(
        seed: UInt64,
        level: SpeedLevel,
        log: InputLog,
        rulesVersion: Int = GameRules.version,
        into sink: inout Sink
    ) throws(Failure) -> GameState {
        guard rulesVersion == GameRules.version else { throw .unsupportedRulesVersion(rulesVersion) }
        var state = GameState(seed: seed, level: level)
        var nextMove = log.moves.startIndex
        for stepsTaken in 0...log.steps {
            while nextMove < log.moves.endIndex, log.moves[nextMove].afterStep == stepsTaken {
                guard !state.isOver else { throw .inputAfterGameOver(step: state.step) }
                state.move(log.moves[nextMove].direction, into: &sink)
                nextMove += 1
            }
            if stepsTaken < log.steps {
                guard !state.isOver else { throw .inputAfterGameOver(step: state.step) }
                state.advance(into: &sink)
            }
        }
        // Moves tagged beyond the last step were never reached above.
        if nextMove < log.moves.endIndex {
            throw .moveAfterLastStep(afterStep: log.moves[nextMove].afterStep, lastStep: log.steps)
        }
        return state
    }

    /// The final state only.
    public static func run(
        seed: UInt64, level: SpeedLevel, log: InputLog, rulesVersion: Int = GameRules.version
    ) throws(Failure) -> GameState {
        var sink = DiscardingSink()
        return try run(seed: seed, level: level, log: log, rulesVersion: rulesVersion, into: &sink)
    }
}
