import Foundation
import RetroRapidRules

/// Leaderboards per speed level for today (UTC), this ISO week and all time (docs/API.md).
/// Pages are keyset-paged with ``LeaderboardCursor``, so a score arriving between two pages
/// neither repeats nor skips an entry; a page's ranks and entries come from one read.
public protocol LeaderboardRepository {
    /// The first page, or the page after `cursor`; `limit` from ``LeaderboardPage/sizeRange``.
    func top(level: SpeedLevel, period: LeaderboardPeriod, limit: Int, after cursor: LeaderboardCursor?, now: Date) throws -> LeaderboardPage

    /// The player's entry with `neighbours` above and below (from
    /// ``LeaderboardNeighbourhood/neighboursRange``); nil when they are not on the board.
    func aroundMe(playerID: Int64, level: SpeedLevel, period: LeaderboardPeriod, neighbours: Int, now: Date) throws -> LeaderboardNeighbourhood?
}

extension LeaderboardRepository {
    public func top(level: SpeedLevel, period: LeaderboardPeriod, limit: Int = 20,
                    after cursor: LeaderboardCursor? = nil, now: Date) throws -> LeaderboardPage {
        try top(level: level, period: period, limit: limit, after: cursor, now: now)
    }

    public func aroundMe(playerID: Int64, level: SpeedLevel, period: LeaderboardPeriod, neighbours: Int = 5, now: Date) throws -> LeaderboardNeighbourhood? {
        try aroundMe(playerID: playerID, level: level, period: period, neighbours: neighbours, now: now)
    }

    /// When the board resets, nil for all time.
    public func resetsAt(period: LeaderboardPeriod, now: Date) -> Date? {
        period.resetsAt(now: now)
    }
}
