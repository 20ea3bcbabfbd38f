import Foundation
import RetroRapidRules

/// A scored start on a daily road the player has already had their one attempt at (today, at
/// this level): refused, and nothing was consumed. Practice on the road stays free.
public struct DailyRoadPlayedError: Error, Sendable, Equatable, CustomStringConvertible {
    public let level: SpeedLevel
    public let day: UTCDay
    /// The game that was the attempt.
    public let gameID: String
    public let storeError: StoreError

    public init(level: SpeedLevel, day: UTCDay, gameID: String) {
        self.level = level
        self.day = day
        self.gameID = gameID
        self.storeError = StoreError(
            .conflict,
            "You have had today's scored attempt on the \(level.rawValue) daily road; a new road comes at 00:00 UTC. Practice on it is free.",
            field: "road")
    }

    /// When the next daily road (and attempt) comes.
    public var resetsAt: Date { day.end }

    public var description: String { storeError.description }
}
