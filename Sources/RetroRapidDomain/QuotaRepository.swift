import Foundation

/// The daily free plays: counting them, consuming one atomically when a game starts. Two
/// devices racing for the last play: exactly one gets it. A player with unlimited play
/// consumes nothing.
public protocol QuotaRepository {
    /// Free plays per player per UTC day.
    var dailyFreePlays: Int { get }

    /// The player's plays today. - Throws: `StoreError(.notFound)` for an unknown player.
    func status(playerID: Int64, now: Date) throws -> QuotaStatus

    /// Consumes one play (none for unlimited play) and returns the status after it.
    /// - Throws: ``QuotaExhaustedError`` when none is left; `StoreError(.notFound)`.
    @discardableResult
    func consumePlay(playerID: Int64, gameID: String?, now: Date) throws -> QuotaStatus
}

extension QuotaRepository {
    @discardableResult
    public func consumePlay(playerID: Int64, now: Date) throws -> QuotaStatus {
        try consumePlay(playerID: playerID, gameID: nil, now: now)
    }
}
