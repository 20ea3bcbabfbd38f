import Foundation

/// Which road a game runs on: a random seed of its own, the day's shared road of its level
/// (``DailyRoadRepository``), or another stored game's seed raced as a ghost (always practice:
/// the road is known, so it scores nothing).
public enum GameRoad: Sendable, Hashable {
    case random
    /// The road of this UTC day. A scored one is the player's one attempt of the day at its level.
    case daily(UTCDay)
    case ghost

    /// `random`, `daily` or `ghost`: as stored (`games.road`) and as the protocol names it.
    public var name: String {
        switch self {
        case .random: "random"
        case .daily: "daily"
        case .ghost: "ghost"
        }
    }

    /// The day of a daily road, nil otherwise (`games.daily_day`).
    public var day: UTCDay? {
        if case .daily(let day) = self { return day }
        return nil
    }

    /// Reads back `games.road` and `games.daily_day`; nil for a pair this build does not know.
    package init?(storedName: String, day: String?) {
        switch (storedName, day) {
        case ("random", nil): self = .random
        case ("ghost", nil): self = .ghost
        case ("daily", let text?):
            guard let day = UTCDay(text) else { return nil }
            self = .daily(day)
        default: return nil
        }
    }

    /// The refusals every backend gives about a game's road, for a game started at `startedAt`.
    package func validate(practice: Bool, startedAt: Date) throws(StoreError) {
        switch self {
        case .random: return
        case .ghost:
            guard practice else {
                throw StoreError(.invalid, "a ghost race is practice: its road is a stored game's, so it cannot score", field: "road")
            }
        case .daily(let day):
            guard day == UTCDay(containing: startedAt) else {
                throw StoreError(.invalid, "a daily game runs on the road of the day it starts (\(UTCDay(containing: startedAt))), not \(day)", field: "road")
            }
        }
    }
}
