import RetroRapidRules

/// Real games played by a cue follower, for the tests that record or replay games.
public enum GameFixture {
    /// Plays a real game: follows the safe-lane cue for `dodgeSteps` steps, then (when `crash`)
    /// stops moving until a car hits. Returns its input log and final state.
    public static func play(seed: UInt64, level: SpeedLevel, dodgeSteps: Int, crash: Bool = true) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        var moves: [InputLog.Entry] = []
        while !state.isOver, state.step < dodgeSteps + 10_000 {
            if state.step < dodgeSteps, !state.safeLanes.contains(state.lane), !state.safeLanes.isEmpty {
                let direction: Direction = state.safeLanes.rawValue < LaneSet(lane: state.lane).rawValue ? .left : .right
                moves.append(InputLog.Entry(afterStep: state.step, direction: direction))
                state.move(direction, into: &sink)
                if state.isOver { break }
            }
            if !crash, state.step >= dodgeSteps { break }
            state.advance(into: &sink)
        }
        return (InputLog(steps: state.step, moves: moves), state)
    }
}
