import RetroRapidRules

/// Plays from the step frames (the grid a sighted player sees), changing at most one
/// lane per step, along a path that survives every visible row. If no such path exists
/// the road broke its promise, and the property tests catch the crash that follows.
public struct PerfectBot: Bot, Sendable {
    private var road = Road()
    private var lane = GameRules.startLane

    public init() {}

    public mutating func receive(_ event: GameEvent) {
        switch event {
        case .frame(let frame):
            road = frame.road
            lane = frame.lane
        case .moved(let to, _):
            lane = to
        default:
            break
        }
    }

    public mutating func nextMoves() -> BotMoves {
        let survivors = PerfectBot.lanesSurvivingVisibleRoad(road)
        let here = road.playerRow
        // Where it could be at the next step: stay, or one lane over if that lane is
        // free in the player's row now; only those with a path on through the road.
        var choice: Lane?
        for target in Lane.allCases where abs(target.rawValue - lane.rawValue) <= 1
            && survivors.contains(target) && (target == lane || !here.contains(target)) {
            if choice.map({ preference(target) < preference($0) }) ?? true { choice = target }
        }
        return choice.map { BotMoves(from: lane, to: $0) } ?? .stay
    }

    /// Staying is best; otherwise the lane nearer the middle, which leaves more ways out.
    private func preference(_ target: Lane) -> Int {
        (target == lane ? 0 : 10) + abs(target.rawValue - Lane.middle.rawValue)
    }

    /// The lanes in which a player arriving at the next step can go on, one lane a
    /// step at most, through every row now visible. Worked backwards from the top row.
    static func lanesSurvivingVisibleRoad(_ road: Road) -> LaneSet {
        let rows = Road.rowCount
        // Row 0 (the top) will be the player's row last: any free lane there survives it.
        var alive = road.row(0).complement
        // Row r will be the player's row just before row r-1 arrives.
        for r in 1..<(rows - 1) {
            let current = road.row(r)
            var canContinue = LaneSet.none
            for lane in Lane.allCases where !current.contains(lane) {
                for offset in -1...1 {
                    guard let target = Lane(rawValue: lane.rawValue + offset), alive.contains(target),
                          target == lane || !current.contains(target) else { continue }
                    canContinue.insert(LaneSet(lane: lane))
                    break
                }
            }
            alive = canContinue
        }
        return alive
    }
}
