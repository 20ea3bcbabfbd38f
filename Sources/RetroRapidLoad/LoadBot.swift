import RetroRapidRules

/// How a simulated player reacts to the game, like a person rather than a perfect bot: it
/// listens to the safe-lane cue, takes a human reaction time to move, sometimes misses a
/// needed move (and crashes), sometimes changes lane when it need not, and after a game over
/// thinks for a moment before starting again. Pure: the caller owns the clock and the sockets.
public struct LoadBot: Sendable {
    public struct Behaviour: Sendable, Equatable {
        /// Reaction time after a step arrives, drawn evenly from this range (milliseconds),
        /// but always inside the step (at most the interval minus `marginMilliseconds`).
        public var reactionMilliseconds: ClosedRange<Int> = 150...350
        public var marginMilliseconds = 40
        /// Chance that a needed move is not made (the player crashes).
        public var missChance = 0.02
        /// Chance of moving to a neighbouring safe lane when the current one is safe anyway.
        public var wanderChance = 0.25
        /// Pause between a game over and the next start (milliseconds).
        public var thinkMilliseconds: ClosedRange<Int> = 1000...3000

        public init() {}
    }

    public enum Decision: Equatable, Sendable {
        case stay
        case move(Direction, afterMilliseconds: Int)
    }

    public let behaviour: Behaviour
    private var random: Xoshiro256StarStar

    public init(behaviour: Behaviour = Behaviour(), seed: UInt64) {
        self.behaviour = behaviour
        random = Xoshiro256StarStar(seed: seed)
    }

    /// What to do after a step: `lane` is where the player is, `safeLanes` the cue (bit n for
    /// lane n), `interval` the milliseconds until the next step.
    public mutating func decide(lane: Int, safeLanes: UInt8, intervalMilliseconds: Int) -> Decision {
        guard safeLanes != 0 else { return .stay }  // the crash step: nothing to do
        let safeHere = safeLanes & (1 << lane) != 0
        let direction: Direction
        if safeHere {
            guard chance(behaviour.wanderChance) else { return .stay }
            let neighbours = [(lane - 1, Direction.left), (lane + 1, .right)].filter { neighbour, _ in
                (0...2).contains(neighbour) && safeLanes & (1 << neighbour) != 0
            }
            guard !neighbours.isEmpty else { return .stay }
            direction = neighbours[Int(random.next(below: UInt32(neighbours.count)))].1
        } else {
            guard !chance(behaviour.missChance) else { return .stay }
            // The cue lists lanes reachable in one move, so a safe neighbour exists.
            let left = lane > 0 && safeLanes & (1 << (lane - 1)) != 0
            let right = lane < 2 && safeLanes & (1 << (lane + 1)) != 0
            switch (left, right) {
            case (true, true): direction = random.next(below: 2) == 0 ? .left : .right
            case (true, false): direction = .left
            case (false, true): direction = .right
            case (false, false): return .stay
            }
        }
        return .move(direction, afterMilliseconds: reaction(within: intervalMilliseconds))
    }

    /// Milliseconds to wait before starting the next game.
    public mutating func thinkTime() -> Int {
        draw(behaviour.thinkMilliseconds)
    }

    /// A delay drawn evenly from 0..<bound, to spread connections' first starts over a step.
    public mutating func spread(below bound: Int) -> Int {
        bound <= 1 ? 0 : Int(random.next(below: UInt32(bound)))
    }

    private mutating func reaction(within interval: Int) -> Int {
        let latest = max(1, interval - behaviour.marginMilliseconds)
        let range = min(behaviour.reactionMilliseconds.lowerBound, latest)...min(behaviour.reactionMilliseconds.upperBound, latest)
        return draw(range)
    }

    private mutating func draw(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next(below: UInt32(range.count)))
    }

    private mutating func chance(_ probability: Double) -> Bool {
        Double(random.next() >> 11) / Double(1 << 53) < probability
    }
}
