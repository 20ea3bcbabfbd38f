import RetroRapidRules

/// Plays from the safe-lane cues alone, exactly what an audio-only player hears: the
/// cue after each step and the confirmation of each of its own moves. It never reads a
/// frame (the simulation strips them before it, see `AudioOnly`). It starts in the
/// middle lane, as the tutorial tells every player.
public struct CueBot: Bot, Sendable {
    private var lane = GameRules.startLane
    private var safe = LaneSet.all

    public init() {}

    public mutating func receive(_ event: GameEvent) {
        switch event {
        case .cue(let safeLanes):
            safe = safeLanes
        case .moved(let to, _):
            lane = to
        default:
            break
        }
    }

    /// Stay if the cue says this lane is safe, else go to the nearest safe lane.
    public mutating func nextMoves() -> BotMoves {
        if safe.contains(lane) { return .stay }
        let nearest = safe.lanes.min { abs($0.rawValue - lane.rawValue) < abs($1.rawValue - lane.rawValue) }
        return nearest.map { BotMoves(from: lane, to: $0) } ?? .stay
    }
}

/// Passes a bot every event except step frames: the grid never reaches it.
public struct AudioOnly<Inner: Bot>: Bot {
    public private(set) var inner: Inner

    public init(_ inner: Inner) { self.inner = inner }

    public mutating func receive(_ event: GameEvent) {
        if case .frame = event { return }
        inner.receive(event)
    }

    public mutating func nextMoves() -> BotMoves { inner.nextMoves() }
}
