import Foundation

/// How the service did on one UTC day, counted from what is stored: what the operator
/// console's overview shows beside the node's live figures.
public struct ServiceSummary: Sendable, Equatable {
    public let day: UTCDay
    public let newPlayers: Int
    public let gamesFinished: Int
    /// Free plays taken (each game a player without unlimited play started).
    public let playsUsed: Int
    public let ordersPaid: Int

    public init(day: UTCDay, newPlayers: Int, gamesFinished: Int, playsUsed: Int, ordersPaid: Int) {
        self.day = day
        self.newPlayers = newPlayers
        self.gamesFinished = gamesFinished
        self.playsUsed = playsUsed
        self.ordersPaid = ordersPaid
    }
}

/// Counts across the tables for the console's overview. Each is a count an operator asks
/// for, not a hot path: the games of a day are counted by a scan (no index on their end),
/// so the console asks at most once a minute per node.
public protocol ServiceSummaryRepository {
    func summary(of day: UTCDay) throws -> ServiceSummary
}
