import RetroRapidRules

/// Real games for the checkpoints of running games: a cue follower that stops before the end,
/// and a player that never moves.
public enum RunningPlay {
    /// Follows the safe-lane cue for `steps` steps; the game is still running after them.
    public static func dodge(seed: UInt64, level: SpeedLevel, steps: Int) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        var moves: [InputLog.Entry] = []
        while state.step < steps, !state.isOver {
            if !state.safeLanes.contains(state.lane), !state.safeLanes.isEmpty {
                let direction: Direction = state.safeLanes.rawValue < LaneSet(lane: state.lane).rawValue ? .left : .right
                moves.append(InputLog.Entry(afterStep: state.step, direction: direction))
                state.move(direction, into: &sink)
            }
            state.advance(into: &sink)
        }
        return (InputLog(steps: state.step, moves: moves), state)
    }

    /// Never moves: the first car in its lane ends it.
    public static func crash(seed: UInt64, level: SpeedLevel) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        while !state.isOver { state.advance(into: &sink) }
        return (InputLog(steps: state.step, moves: []), state)
    }
}
