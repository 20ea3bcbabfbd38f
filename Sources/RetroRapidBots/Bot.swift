import RetroRapidRules

/// A built-in player. It learns about the game only from the events it receives, like
/// a real player, and between steps says which moves it makes before the next one.
public protocol Bot: GameEventSink {
    mutating func nextMoves() -> BotMoves
}

/// Up to two moves in one direction (two only to reach a lane two away).
public struct BotMoves: Equatable, Sendable {
    public var direction: Direction?
    public var count: Int

    public static let stay = BotMoves(direction: nil, count: 0)

    public init(direction: Direction?, count: Int) {
        self.direction = direction
        self.count = direction == nil ? 0 : count
    }

    /// The moves that take a player from `lane` to `target`.
    public init(from lane: Lane, to target: Lane) {
        let distance = target.rawValue - lane.rawValue
        self.init(direction: distance == 0 ? nil : (distance < 0 ? .left : .right), count: abs(distance))
    }
}

/// The bots `retrorapid sim` offers.
public enum BotKind: String, CaseIterable, Sendable {
    /// Sees the whole grid and plans a path through every visible row.
    case perfect
    /// Hears only the safe-lane cues and its own moves: what an audio-only player gets.
    case cues
    /// Moves at random: the baseline.
    case random
}
