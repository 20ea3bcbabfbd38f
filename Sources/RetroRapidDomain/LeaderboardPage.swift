import Foundation
import RetroRapidRules

/// One line of a leaderboard.
public struct LeaderboardEntry: Sendable, Equatable {
    /// 1-based position: higher score first, then the earlier achievement, then the player who
    /// joined first (lower internal id). No two entries share a rank.
    public var rank: Int
    public var playerPublicID: String
    public var displayName: String
    public var score: Int
    /// When the game that set this best ended (whole UTC seconds).
    public var achievedAt: Date
    /// The game that holds the score (its replay); nil for a game stored before public ids.
    public var gameID: String?

    public init(rank: Int, playerPublicID: String, displayName: String, score: Int, achievedAt: Date, gameID: String? = nil) {
        self.rank = rank
        self.playerPublicID = playerPublicID
        self.displayName = displayName
        self.score = score
        self.achievedAt = achievedAt
        self.gameID = gameID
    }
}

/// Where a page of a leaderboard ended, to ask for the next one. Opaque to clients: send it
/// back as it came. It names its board (level, period and the period's key), so a day that
/// rolls over while someone pages keeps them on the board they started on.
public struct LeaderboardCursor: Hashable, Sendable, CustomStringConvertible {
    /// URL-safe text, e.g. for `?after=`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    package struct Position: Equatable {
        package var level: SpeedLevel
        package var period: LeaderboardPeriod
        package var periodKey: String
        package var score: Int
        package var achievedAt: String
        package var playerID: Int64

        package init(level: SpeedLevel, period: LeaderboardPeriod, periodKey: String, score: Int, achievedAt: String, playerID: Int64) {
            self.level = level
            self.period = period
            self.periodKey = periodKey
            self.score = score
            self.achievedAt = achievedAt
            self.playerID = playerID
        }
    }

    package init(_ position: Position) {
        let text = ["1", position.level.rawValue, position.period.rawValue, position.periodKey,
                    String(position.score), position.achievedAt, String(position.playerID)].joined(separator: "|")
        rawValue = Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The alphabet `init(_:)` writes (base64url without padding); docs/openapi.json states it
    /// with the length limit below, so text outside it is refused before decoding.
    public static let maximumLength = 200

    /// The position, or nil for text this code did not write.
    package var position: Position? {
        guard !rawValue.isEmpty, rawValue.utf8.allSatisfy({ byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }) else { return nil }
        var base64 = rawValue.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard rawValue.utf8.count <= Self.maximumLength, let data = Data(base64Encoded: base64),
              let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 7, parts[0] == "1",
              let level = SpeedLevel(rawValue: parts[1]),
              let period = LeaderboardPeriod(rawValue: parts[2]),
              !parts[3].isEmpty,
              let score = Int(parts[4]), score >= 0,
              UTCCivilTime.parse(parts[5]) != nil,
              let playerID = Int64(parts[6])
        else { return nil }
        return Position(level: level, period: period, periodKey: parts[3], score: score, achievedAt: parts[5], playerID: playerID)
    }
}

/// One page of a leaderboard, best first.
public struct LeaderboardPage: Sendable, Equatable {
    public var level: SpeedLevel
    public var period: LeaderboardPeriod
    /// The board: `2026-01-15`, `2026-W03` or `all`.
    public var periodKey: String
    public var entries: [LeaderboardEntry]
    /// Pass to `top(…after:…)` for the next page; nil on the last page.
    public var nextCursor: LeaderboardCursor?
    /// How many players are on the board.
    public var total: Int
    /// When the current period of this kind ends (nil for all time). A page read through a
    /// cursor from a period that has since ended shows that old board, already over. A daily
    /// board's is the end of its day.
    public var resetsAt: Date?
    /// Set on a daily road's board (``DailyRoadRepository``): its day (`periodKey` is the same
    /// text, `period` is `today`).
    public var day: UTCDay?

    package init(level: SpeedLevel, period: LeaderboardPeriod, periodKey: String, entries: [LeaderboardEntry], nextCursor: LeaderboardCursor?, total: Int, resetsAt: Date?, day: UTCDay? = nil) {
        self.level = level
        self.period = period
        self.periodKey = periodKey
        self.entries = entries
        self.nextCursor = nextCursor
        self.total = total
        self.resetsAt = resetsAt
        self.day = day
    }
}

/// A player's own line of a leaderboard with the lines around it.
public struct LeaderboardNeighbourhood: Sendable, Equatable {
    public var level: SpeedLevel
    public var period: LeaderboardPeriod
    public var periodKey: String
    /// The player's own line (its `rank` is their rank).
    public var me: LeaderboardEntry
    /// Up to N lines above, the player's line, up to N lines below: in rank order.
    public var entries: [LeaderboardEntry]
    /// Pass to `top(…after:…)` for the lines below these ("show more"); nil when the last
    /// line is the board's last.
    public var nextCursor: LeaderboardCursor?
    /// How many players are on the board ("rank 512 of 10,000").
    public var total: Int
    public var resetsAt: Date?
    /// Set on a daily road's board, as on ``LeaderboardPage/day``.
    public var day: UTCDay?

    package init(level: SpeedLevel, period: LeaderboardPeriod, periodKey: String, me: LeaderboardEntry, entries: [LeaderboardEntry], nextCursor: LeaderboardCursor?, total: Int, resetsAt: Date?, day: UTCDay? = nil) {
        self.level = level
        self.period = period
        self.periodKey = periodKey
        self.me = me
        self.entries = entries
        self.nextCursor = nextCursor
        self.total = total
        self.resetsAt = resetsAt
        self.day = day
    }
}

extension LeaderboardPage {
    /// How many entries one page may ask for.
    public static let sizeRange = 1...100
}

extension LeaderboardNeighbourhood {
    /// How many neighbours above and below a player may be asked for.
    public static let neighboursRange = 0...50
}
