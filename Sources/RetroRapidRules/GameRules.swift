/// The numbers the rules are made of. Tunable ones carry their reason in
/// docs/GAME_RULES.md; changing any of them (or the generator) changes how stored
/// games replay, so it comes with a new `version`.
public enum GameRules {
    /// Stored with every game; `Replay` refuses a log written under another version.
    public static let version = 1

    /// Rows on screen, the player's row included (the bottom one).
    public static let visibleRows = 7

    /// The lane every game starts in.
    public static let startLane = Lane.middle

    /// The step gets faster each time the score passes a multiple of this.
    public static let speedUpEvery = 100

    /// "Speed up soon" comes this many points before each speed-up (at 90, 190, ...),
    /// early enough for a screen reader to say it before it happens.
    public static let speedUpSoonLead = 10

    /// Each speed-up multiplies the step interval by numerator/denominator (x0.9),
    /// in integer milliseconds so every machine computes the same interval.
    public static let speedUpNumerator = 9
    public static let speedUpDenominator = 10

    /// The latency grace window's upper bound. The window used is the smaller of this
    /// and half the step interval that was re-evaluated (see `Game.move`).
    public static let latencyGraceMilliseconds = 150
}

/// How fast the road comes: the names are part of the design (never easy/medium/hard).
public enum SpeedLevel: String, CaseIterable, Sendable, Codable {
    case cruise
    case fast
    case rapid

    /// The step interval a game starts with, in milliseconds.
    public var baseStepInterval: Int {
        switch self {
        case .cruise: 800
        case .fast: 600
        case .rapid: 420
        }
    }

    /// Speed-ups never go below this: half the base interval.
    public var minimumStepInterval: Int { baseStepInterval / 2 }

    /// How often each kind of row is drawn (see `RoadGenerator`).
    public var traffic: TrafficProfile {
        switch self {
        case .cruise: TrafficProfile(emptyWeight: 9, oneCarWeight: 3, twoCarWeight: 1)
        case .fast: TrafficProfile(emptyWeight: 7, oneCarWeight: 3, twoCarWeight: 2)
        case .rapid: TrafficProfile(emptyWeight: 6, oneCarWeight: 3, twoCarWeight: 3)
        }
    }

    /// The display name: "Cruise", "Fast", "Rapid".
    public var displayName: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// The interval after one more speed-up from `interval`, never below the floor.
    @inlinable
    public func interval(afterSpeedUpFrom interval: Int) -> Int {
        max(minimumStepInterval, interval * GameRules.speedUpNumerator / GameRules.speedUpDenominator)
    }
}
