import Foundation
import RetroRapidRules

/// One player's best on a board as a backend reads it from `best_scores` joined to `players`,
/// before it has a rank. The pages are put together from these lines here, once, so every
/// backend numbers ranks, pages and cursors alike; a backend only finds the lines and counts
/// the entries ahead.
package struct LeaderboardLine: Equatable, Sendable {
    package var playerID: Int64
    package var publicID: String
    package var displayName: String
    package var score: Int
    /// As stored (UTCCivilTime text): the ranking compares it as text.
    package var achievedAt: String
    /// The public id of the game that set it (`games.public_id`), nil for a game without one.
    package var gameID: String?

    package init(playerID: Int64, publicID: String, displayName: String, score: Int, achievedAt: String, gameID: String? = nil) {
        self.playerID = playerID
        self.publicID = publicID
        self.displayName = displayName
        self.score = score
        self.achievedAt = achievedAt
        self.gameID = gameID
    }

    /// Where the line sits in ranking order: higher score first, then the earlier time, then
    /// the lower player id.
    package var position: (score: Int, achievedAt: String, playerID: Int64) { (score, achievedAt, playerID) }

    package func entry(rank: Int) -> LeaderboardEntry {
        LeaderboardEntry(rank: rank, playerPublicID: publicID, displayName: displayName, score: score,
                         achievedAt: UTCCivilTime.parse(achievedAt) ?? Date(timeIntervalSince1970: 0), gameID: gameID)
    }
}

extension LeaderboardPage {
    /// A page size of ``LeaderboardRepository/top(level:period:limit:after:now:)``, checked the
    /// same in every backend (`.invalid` outside ``sizeRange``).
    package static func validatedSize(_ limit: Int) throws -> Int {
        guard sizeRange.contains(limit) else {
            throw StoreError(.invalid, "must be from \(sizeRange.lowerBound) to \(sizeRange.upperBound), got \(limit)", field: "limit")
        }
        return limit
    }

    /// The position a `top` request continues after: nil without a cursor; `.invalid` for a
    /// cursor this server never gave out or one of another board. `daily` names a daily road's
    /// board (``UTCDay/boardKey``), whose cursors fit only that board.
    package static func validatedPosition(_ cursor: LeaderboardCursor?, level: SpeedLevel,
                                          period: LeaderboardPeriod, daily: UTCDay? = nil) throws -> LeaderboardCursor.Position? {
        guard let cursor else { return nil }
        guard let position = cursor.position else {
            throw StoreError(.invalid, "is not a cursor this server gave out; start again from the first page", field: "cursor")
        }
        let positionDaily = position.periodKey.hasPrefix("daily:")
        if let daily {
            guard position.level == level, positionDaily, position.periodKey == daily.boardKey else {
                throw StoreError(.invalid, "belongs to another leaderboard, not the \(level.rawValue) daily board of \(daily)", field: "cursor")
            }
            return position
        }
        guard position.level == level, position.period == period, !positionDaily else {
            let board = positionDaily ? "daily" : position.period.rawValue
            throw StoreError(.invalid, "belongs to the \(position.level.rawValue) \(board) leaderboard, not \(level.rawValue) \(period.rawValue)", field: "cursor")
        }
        return position
    }

    /// The page from up to `limit + 1` lines in ranking order (one more than shown tells that
    /// there is a next page), the first of them ranked `firstRank`.
    /// `daily` marks a daily road's board: `periodKey` is then its ``UTCDay/boardKey`` (the
    /// cursors carry it), the page shows the day and resets at the day's end.
    package static func assemble(level: SpeedLevel, period: LeaderboardPeriod, periodKey: String, lines: [LeaderboardLine],
                                 firstRank: Int, limit: Int, total: Int, now: Date, daily: UTCDay? = nil) -> LeaderboardPage {
        let shown = Array(lines.prefix(limit))
        let entries = shown.enumerated().map { offset, line in line.entry(rank: firstRank + offset) }
        let next = lines.count > limit ? shown.last.map { line in
            LeaderboardCursor(.init(level: level, period: period, periodKey: periodKey, score: line.score,
                                    achievedAt: line.achievedAt, playerID: line.playerID))
        } : nil
        return LeaderboardPage(level: level, period: period, periodKey: daily?.text ?? periodKey, entries: entries,
                               nextCursor: next, total: total, resetsAt: daily?.end ?? period.resetsAt(now: now), day: daily)
    }
}

extension LeaderboardNeighbourhood {
    /// A neighbour count of ``LeaderboardRepository/aroundMe(playerID:level:period:neighbours:now:)``,
    /// checked the same in every backend (`.invalid` outside ``neighboursRange``).
    package static func validatedNeighbours(_ neighbours: Int) throws -> Int {
        guard neighboursRange.contains(neighbours) else {
            throw StoreError(.invalid, "must be from \(neighboursRange.lowerBound) to \(neighboursRange.upperBound), got \(neighbours)", field: "neighbours")
        }
        return neighbours
    }

    /// The neighbourhood of `mine` (ranked `rank`): `above` nearest first (up to `neighbours`),
    /// `below` in ranking order (up to `neighbours + 1`: one more tells there is a next page).
    package static func assemble(level: SpeedLevel, period: LeaderboardPeriod, periodKey: String, mine: LeaderboardLine, rank: Int,
                                 above: [LeaderboardLine], below: [LeaderboardLine], neighbours: Int, total: Int,
                                 now: Date, daily: UTCDay? = nil) -> LeaderboardNeighbourhood {
        let shownBelow = Array(below.prefix(neighbours))
        var entries: [LeaderboardEntry] = []
        for (offset, line) in above.reversed().enumerated() {
            entries.append(line.entry(rank: rank - above.count + offset))
        }
        let me = mine.entry(rank: rank)
        entries.append(me)
        for (offset, line) in shownBelow.enumerated() {
            entries.append(line.entry(rank: rank + 1 + offset))
        }
        let last = shownBelow.last ?? mine
        let next = below.count > neighbours
            ? LeaderboardCursor(.init(level: level, period: period, periodKey: periodKey, score: last.score,
                                      achievedAt: last.achievedAt, playerID: last.playerID))
            : nil
        return LeaderboardNeighbourhood(level: level, period: period, periodKey: daily?.text ?? periodKey, me: me, entries: entries,
                                        nextCursor: next, total: total, resetsAt: daily?.end ?? period.resetsAt(now: now), day: daily)
    }
}
