/// One game's state and its two rules-bearing actions, `step` and `move`. A plain
/// value with no heap storage: copying it is how the grace rule rewinds a step.
/// It knows nothing of time, sockets or storage; `Game` adds pause, the input log
/// and the grace rule on top.
public struct GameState: Equatable, Sendable {
    public enum Status: Hashable, Sendable {
        case running
        case crashed(CrashKind)
    }

    // The 8-byte fields first and the small ones together last: laid out in this order, the
    // state takes 87 bytes instead of 101, and a server game holds two (`Game`).
    public private(set) var score = 0
    /// Steps taken so far.
    public private(set) var step = 0
    /// Milliseconds between steps at the current speed.
    public private(set) var stepInterval: Int
    /// How many speed-ups have happened.
    public private(set) var speedStage = 0
    public private(set) var generator: RoadGenerator
    public private(set) var road = Road()
    public let level: SpeedLevel
    public private(set) var lane = GameRules.startLane
    public private(set) var status = Status.running

    public init(seed: UInt64, level: SpeedLevel) {
        self.level = level
        stepInterval = level.baseStepInterval
        generator = RoadGenerator(seed: seed, traffic: level.traffic)
    }

    /// A game already under way, from a chosen position: tests (and later the tutorial's
    /// scenes) set a scene with it. The road ahead still comes from `seed`.
    init(seed: UInt64, level: SpeedLevel, road: Road, lane: Lane, score: Int = 0, step: Int = 0,
         stepInterval: Int? = nil, speedStage: Int = 0) {
        self.init(seed: seed, level: level)
        self.road = road
        self.lane = lane
        self.score = score
        self.step = step
        self.stepInterval = stepInterval ?? level.baseStepInterval
        self.speedStage = speedStage
    }

    @inlinable
    public var isOver: Bool { status != .running }

    /// The lanes the player could be in at the next step without crashing: free in
    /// the row about to arrive, and reachable now (every lane crossed on the way is
    /// free in the player's row).
    @inlinable
    public var safeLanes: LaneSet {
        let here = road.playerRow
        let arriving = road.nextRow
        var safe = LaneSet.none
        for target in Lane.allCases where !arriving.contains(target) {
            let low = min(lane.rawValue, target.rawValue)
            let high = max(lane.rawValue, target.rawValue)
            var reachable = true
            for crossed in low...high where here.contains(Lane(rawValue: crossed)!) {
                reachable = false
            }
            if reachable { safe.insert(LaneSet(lane: target)) }
        }
        return safe
    }

    /// Moves every car down a row. Events, in order: frame; then either crash, crash
    /// haptic and game over, or (speed-up-soon | speed-up), cue and step haptic.
    public mutating func advance<Sink: GameEventSink>(into sink: inout Sink) {
        precondition(status == .running, "a finished game takes no steps")
        let overtaken = road.advance(entering: generator.nextRow())
        step += 1
        let previousScore = score
        score += overtaken.count
        let crashed = road.playerRow.contains(lane)
        if crashed { status = .crashed(.ahead) }
        sink.receive(.frame(StepFrame(step: step, road: road, lane: lane, score: score, stepInterval: stepInterval)))
        if crashed {
            finish(crash: .ahead, into: &sink)
            return
        }
        announceSpeed(from: previousScore, into: &sink)
        sink.receive(.cue(safeLanes: safeLanes))
        sink.receive(.haptic(.step))
    }

    /// Moves one lane sideways, at once. Into the edge it is a bump; into a car in the
    /// player's row it is a crash.
    public mutating func move<Sink: GameEventSink>(_ direction: Direction, into sink: inout Sink) {
        precondition(status == .running, "a finished game takes no moves")
        guard let target = lane.moved(direction) else {
            sink.receive(.bump(direction))
            sink.receive(.haptic(.bump))
            return
        }
        lane = target
        if road.playerRow.contains(target) {
            status = .crashed(.side)
            sink.receive(.moved(to: target, safe: false))
            finish(crash: .side, into: &sink)
            return
        }
        sink.receive(.moved(to: target, safe: !road.nextRow.contains(target)))
        sink.receive(.haptic(.move))
    }

    mutating func finish<Sink: GameEventSink>(crash: CrashKind, into sink: inout Sink) {
        sink.receive(.crash(crash, lane: lane))
        sink.receive(.haptic(.crash))
        sink.receive(.gameOver(score: score, steps: step))
    }

    /// Speed-up-soon when the score first reaches 90, 190, ...; a speed-up at 100, 200, ...
    /// Both stop once the interval is at the level's floor: a speed-up that changes nothing
    /// would only sound a banner, a chime and an announcement for nothing. `speedStage`
    /// therefore counts the speed-ups that happened, and stops with them.
    mutating func announceSpeed<Sink: GameEventSink>(from previousScore: Int, into sink: inout Sink) {
        guard stepInterval > level.minimumStepInterval else { return }
        let nextSpeedUp = (speedStage + 1) * GameRules.speedUpEvery
        let soonAt = nextSpeedUp - GameRules.speedUpSoonLead
        if previousScore < soonAt && score >= soonAt && score < nextSpeedUp {
            sink.receive(.speedUpSoon(atScore: nextSpeedUp))
        }
        while stepInterval > level.minimumStepInterval, score >= (speedStage + 1) * GameRules.speedUpEvery {
            speedStage += 1
            stepInterval = level.interval(afterSpeedUpFrom: stepInterval)
            sink.receive(.speedUp(stepInterval: stepInterval, stage: speedStage))
        }
    }
}
