import Foundation
import RetroRapidRules

/// The reads a backend answers for one leaderboard board, each one query in its own SQL
/// dialect; how a page and a player's neighbourhood are built from them is written once
/// (`LeaderboardPage.read`, `LeaderboardNeighbourhood.read`), so both backends rank alike.
/// Called inside the backend's read transaction, so the reads agree with each other.
package protocol LeaderboardReads {
    typealias Position = (score: Int, achievedAt: String, playerID: Int64)

    /// Up to `limit` lines after `position` in ranking order (from the top when nil).
    func lines(after position: Position?, limit: Int) throws -> [LeaderboardLine]
    /// Up to `limit` lines before `position`, nearest first (the reverse of ranking order).
    func lines(before position: Position, limit: Int) throws -> [LeaderboardLine]
    /// The rank a line at `position` has (1 for the first).
    func rank(of position: Position) throws -> Int
    /// The player's best line on the board, nil when they have none.
    func best(playerID: Int64) throws -> LeaderboardLine?
    /// `lines` with the public id of the game that holds each one's best.
    func withGameIDs(_ lines: [LeaderboardLine]) throws -> [LeaderboardLine]
    /// How many players have a line on the board.
    func total() throws -> Int
    /// Throws `StoreError.notFound` for a player that does not exist.
    func requirePlayer(_ playerID: Int64) throws
}

extension LeaderboardPage {
    /// A page of the board `reads` reads: the first `limit` lines, or the `limit` after `after`
    /// (both already checked).
    package static func read(_ reads: some LeaderboardReads, level: SpeedLevel, period: LeaderboardPeriod, periodKey: String,
                             limit: Int, after: LeaderboardCursor.Position?, now: Date, daily: UTCDay? = nil) throws -> LeaderboardPage {
        let lines: [LeaderboardLine]
        let firstRank: Int
        if let after {
            lines = try reads.lines(after: (after.score, after.achievedAt, after.playerID), limit: limit + 1)
            firstRank = try lines.first.map { try reads.rank(of: $0.position) } ?? 0
        } else {
            lines = try reads.lines(after: nil, limit: limit + 1)
            firstRank = 1
        }
        return assemble(level: level, period: period, periodKey: periodKey, lines: try reads.withGameIDs(lines),
                        firstRank: firstRank, limit: limit, total: try reads.total(), now: now, daily: daily)
    }
}

extension LeaderboardNeighbourhood {
    /// The player's rank on the board `reads` reads, with up to `neighbours` lines above and
    /// below (already checked). Nil when the player has no line there; an unknown player is
    /// `StoreError.notFound`.
    package static func read(_ reads: some LeaderboardReads, playerID: Int64, level: SpeedLevel, period: LeaderboardPeriod,
                             periodKey: String, neighbours: Int, now: Date, daily: UTCDay? = nil) throws -> LeaderboardNeighbourhood? {
        guard let mine = try reads.best(playerID: playerID) else {
            try reads.requirePlayer(playerID)
            return nil
        }
        let rank = try reads.rank(of: mine.position)
        let above = try reads.lines(before: mine.position, limit: neighbours)
        let below = try reads.lines(after: mine.position, limit: neighbours + 1)
        let named = try reads.withGameIDs(above + [mine] + below)
        return assemble(level: level, period: period, periodKey: periodKey, mine: named[above.count], rank: rank,
                        above: Array(named[..<above.count]), below: Array(named[(above.count + 1)...]),
                        neighbours: neighbours, total: try reads.total(), now: now, daily: daily)
    }
}

/// A board's reads and the one write a scored game makes to it, for `RecordedGame.scored`.
package protocol LeaderboardOffers: LeaderboardReads {
    /// Offers a score as the player's best on the board; true when it became the best.
    func offer(playerID: Int64, score: Int, achievedAt: String, gameID: Int64) throws -> Bool
}

extension RecordedGame {
    /// A scored game just stored, with its place on each of its level's boards (today, this
    /// week, all time: those containing `endedAt`, the game's end as it came) and, for a daily
    /// game, on its day's board: the score is offered to each as achieved at `achievedAt` (the
    /// stored text), then the player's best and rank there are read back. `board` opens the
    /// backend's view of one board (level, period, period key); called inside the transaction
    /// that stored the game.
    package static func scored<Board: LeaderboardOffers>(
        _ stored: GameRecord, endedAt: Date, achievedAt: String, board: (SpeedLevel, LeaderboardPeriod, String) -> Board
    ) throws -> RecordedGame {
        var standings: [LeaderboardStanding] = []
        for period in LeaderboardPeriod.allCases {
            let key = period.key(containing: endedAt)
            let (isNewBest, best, rank) = try offer(stored, achievedAt: achievedAt, to: board(stored.level, period, key), what: "row")
            standings.append(LeaderboardStanding(level: stored.level, period: period, periodKey: key, personalBest: best,
                                                 isNewBest: isNewBest, rank: rank))
        }
        // A scored daily game also goes on its day's board (one per player: its one attempt).
        var daily: DailyStanding?
        if let day = stored.road.day {
            let (_, best, rank) = try offer(stored, achievedAt: achievedAt, to: board(stored.level, .today, day.boardKey), what: "daily row")
            daily = DailyStanding(day: day, best: best, rank: rank)
        }
        return RecordedGame(game: stored, standings: standings, daily: daily)
    }

    private static func offer(_ stored: GameRecord, achievedAt: String, to board: some LeaderboardOffers,
                              what: String) throws -> (isNewBest: Bool, best: Int, rank: Int) {
        let isNewBest = try board.offer(playerID: stored.playerID, score: stored.score, achievedAt: achievedAt, gameID: stored.id)
        guard let best = try board.best(playerID: stored.playerID) else {
            throw StoreError.unreadable("best_scores lost the \(what) just written for game \(stored.id)")
        }
        return (isNewBest, best.score, try board.rank(of: best.position))
    }
}
