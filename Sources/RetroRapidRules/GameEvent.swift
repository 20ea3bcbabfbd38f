/// What the game tells a player: semantic events, not presentation. The server turns
/// them into messages; the client into sound, haptics, visuals and speech.
public enum GameEvent: Hashable, Sendable {
    /// After every step: the whole picture.
    case frame(StepFrame)
    /// The lanes the player could be in at the next step without crashing, counting
    /// only lanes they can reach from where they are (see `GameState.safeLanes`).
    case cue(safeLanes: LaneSet)
    /// A move was made: the new lane and whether it is safe at the next step.
    case moved(to: Lane, safe: Bool)
    /// A move into the edge: nothing changed, but the player must perceive it.
    case bump(Direction)
    /// The score is `GameRules.speedUpSoonLead` points from the next speed-up.
    case speedUpSoon(atScore: Int)
    /// The step got faster.
    case speedUp(stepInterval: Int, stage: Int)
    /// The game ends with this crash.
    case crash(CrashKind, lane: Lane)
    /// The last event of a game.
    case gameOver(score: Int, steps: Int)
    /// A moment a client may turn into vibration.
    case haptic(HapticMoment)
    /// A late move was applied under the grace rule: the events of step `step` that
    /// follow replace those sent before.
    case stepRevised(step: Int)
    case paused
    case resumed
}

/// The picture after a step.
public struct StepFrame: Hashable, Sendable {
    public var step: Int
    public var road: Road
    public var lane: Lane
    public var score: Int
    /// Milliseconds until the next step (at the current speed).
    public var stepInterval: Int

    public init(step: Int, road: Road, lane: Lane, score: Int, stepInterval: Int) {
        self.step = step
        self.road = road
        self.lane = lane
        self.score = score
        self.stepInterval = stepInterval
    }
}

public enum CrashKind: String, Hashable, Sendable, Codable {
    /// A car came down into the player's lane.
    case ahead
    /// The player moved sideways into a car.
    case side
}

public enum HapticMoment: String, Hashable, Sendable, Codable {
    case crash
    case step
    case move
    case bump
}

/// Receives a game's events as they happen. Generic so that the engine writes into
/// it without boxing or allocating (see docs/BENCHMARKS.md).
public protocol GameEventSink {
    mutating func receive(_ event: GameEvent)
}

/// Keeps every event, in order (tests, replays, the server's outbox).
public struct EventRecorder: GameEventSink, Sendable {
    public private(set) var events: [GameEvent] = []
    public init() {}
    public mutating func receive(_ event: GameEvent) { events.append(event) }
    public mutating func removeAll() { events.removeAll(keepingCapacity: true) }
}

/// Drops every event (simulations that only want the final state).
public struct DiscardingSink: GameEventSink, Sendable {
    public init() {}
    @inlinable public mutating func receive(_ event: GameEvent) {}
}
