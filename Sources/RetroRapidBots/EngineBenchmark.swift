import Dispatch
import RetroRapidRules

/// Measures the engine alone: one game on one thread, stepped as fast as possible,
/// with the moves a cue-following player makes, through `Game` (the wrapper the
/// server uses, grace snapshot included) into a sink that keeps nothing.
public enum EngineBenchmark {
    public struct Run: Sendable {
        public var steps: Int
        public var moves: Int
        public var seconds: Double
        public var stepsPerSecond: Double { Double(steps) / seconds }
    }

    /// Plays `steps` steps (starting a new game on the rare crash, which a
    /// cue-follower never has) and times them.
    public static func run(steps: Int, seed: UInt64 = 1, level: SpeedLevel = .rapid) -> Run {
        var sink = DiscardingSink()
        var game = Game(seed: seed, level: level)
        var moves = 0
        let start = DispatchTime.now().uptimeNanoseconds
        do {
            for _ in 0..<steps {
                if game.state.isOver { game = Game(seed: game.seed &+ 1, level: level) }
                try game.step(into: &sink)
                let state = game.state
                if !state.isOver, !state.safeLanes.contains(state.lane) {
                    let direction: Direction = state.safeLanes.rawValue < LaneSet(lane: state.lane).rawValue ? .left : .right
                    try game.move(direction, seenStep: state.step, into: &sink)
                    moves += 1
                }
            }
        } catch {
            preconditionFailure("the benchmark's game refused an input: \(error)")
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Run(steps: steps, moves: moves, seconds: seconds)
    }
}
