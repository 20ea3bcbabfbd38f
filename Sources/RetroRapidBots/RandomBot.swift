import RetroRapidRules

/// Moves left, right or not at all with equal chance, blind to the road: the baseline
/// the other bots are measured against. Seeded, so a run can be repeated.
public struct RandomBot: Bot, Sendable {
    private var random: Xoshiro256StarStar

    public init(seed: UInt64) { random = Xoshiro256StarStar(seed: seed ^ 0x5EED_B07) }

    public mutating func receive(_ event: GameEvent) {}

    public mutating func nextMoves() -> BotMoves {
        switch random.next(below: 3) {
        case 0: BotMoves(direction: .left, count: 1)
        case 1: BotMoves(direction: .right, count: 1)
        default: .stay
        }
    }
}
