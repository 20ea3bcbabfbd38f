import Foundation
import RetroRapidRules

/// The daily road: one seed per UTC day per level (`daily_roads`), made at random the first
/// time anyone asks for it and stored, so every node and every player meets the same road and
/// nobody can work it out ahead; and its board, the scored daily games of that day.
///
/// The one scored attempt per player per day per level is taken by
/// ``RunningGameRepository/begin(_:)`` in the play's own transaction (`daily_attempts`), and the
/// game's score reaches the board through ``GameRepository/record(_:)``, like the other boards.
public protocol DailyRoadRepository {
    /// The seed of `level`'s road on `day`, made and stored on the first ask: any number of
    /// asks at once, on any node, all get the one stored seed. A `day` after today (of `now`)
    /// is `.invalid` (field `day`): tomorrow's road is not given out.
    func seed(level: SpeedLevel, day: UTCDay, now: Date) throws -> UInt64

    /// The seed if it was made, without making it.
    func storedSeed(level: SpeedLevel, day: UTCDay) throws -> UInt64?

    /// The day's board, best first: as ``LeaderboardRepository/top(level:period:limit:after:now:)``
    /// with `day` set on the page. A future day is `.invalid` (field `day`).
    func top(level: SpeedLevel, day: UTCDay, limit: Int, after cursor: LeaderboardCursor?, now: Date) throws -> LeaderboardPage

    /// The player's line on the day's board with its neighbours; nil when they have no score on it.
    func aroundMe(playerID: Int64, level: SpeedLevel, day: UTCDay, neighbours: Int, now: Date) throws -> LeaderboardNeighbourhood?

    /// The player's scored attempt at `level`'s road of `day`, nil when they have not made it.
    func attempt(playerID: Int64, level: SpeedLevel, day: UTCDay) throws -> DailyAttempt?
}

extension DailyRoadRepository {
    public func top(level: SpeedLevel, day: UTCDay, limit: Int = 20, after cursor: LeaderboardCursor? = nil, now: Date) throws -> LeaderboardPage {
        try top(level: level, day: day, limit: limit, after: cursor, now: now)
    }

    public func aroundMe(playerID: Int64, level: SpeedLevel, day: UTCDay, neighbours: Int = 5, now: Date) throws -> LeaderboardNeighbourhood? {
        try aroundMe(playerID: playerID, level: level, day: day, neighbours: neighbours, now: now)
    }
}

/// A player's scored attempt at a daily road.
public struct DailyAttempt: Sendable, Equatable {
    public var gameID: String
    public var startedAt: Date
    /// Nil while the game still runs (it is not stored yet).
    public var score: Int?
    /// Its place on the day's board; nil while it runs.
    public var rank: Int?

    public init(gameID: String, startedAt: Date, score: Int?, rank: Int?) {
        self.gameID = gameID
        self.startedAt = startedAt
        self.score = score
        self.rank = rank
    }
}

/// A scored daily game's place on its day's board, for the game-over message.
public struct DailyStanding: Sendable, Equatable {
    public var day: UTCDay
    /// The player's score on the board (their one attempt: this game).
    public var best: Int
    public var rank: Int

    public init(day: UTCDay, best: Int, rank: Int) {
        self.day = day
        self.best = best
        self.rank = rank
    }
}

extension UTCDay {
    /// A day a daily road or board may be asked for: today or before (`.invalid` after).
    package func validatedNotAfterToday(now: Date) throws(StoreError) -> UTCDay {
        let today = UTCDay(containing: now)
        guard self <= today else {
            throw StoreError(.invalid, "must be today (\(today)) or an earlier day, got \(self)", field: "day")
        }
        return self
    }

    /// The `best_scores` board key of this day's daily board: `daily:2026-12-01`. It shares the
    /// table with the day boards (period `day`, whose keys are bare dates, so the two never
    /// meet) and so every rule of the other boards: one best per player, exact ranks through
    /// `score_counts`, the same indexes and query plans. A new period name would need SQLite's
    /// `best_scores` rebuilt (its CHECK lists the periods).
    package var boardKey: String { "daily:" + text }

    /// A new random seed, from the system's cryptographic generator: nobody can compute it.
    package static func newSeed() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }
}
