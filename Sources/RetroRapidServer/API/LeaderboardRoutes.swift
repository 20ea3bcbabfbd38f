import Foundation
import RetroRapidRules
import RetroRapidDomain

/// Leaderboards per speed level for today (UTC), this week and all time (docs/API.md): the top
/// with keyset paging (`cursor` from the previous page), and the signed-in player's own rank
/// with the lines around it. Both say when the board resets. The period `daily` is a daily
/// road's board (`?day=YYYY-MM-DD`, today by default), with its `day`.
enum LeaderboardRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/leaderboards/{level}/{period}") { request, responder in top(request, responder, api) }
        router.add(.get, "/api/v1/leaderboards/{level}/{period}/around-me") { request, responder in aroundMe(request, responder, api) }
    }

    struct EntryJSON: Encodable {
        var rank: Int
        /// The player's public id.
        var playerId: String
        var displayName: String
        var score: Int
        var achievedAt: Date
        /// The game that holds the score (its replay); absent for games stored before game ids.
        var gameId: String?

        init(_ entry: LeaderboardEntry) {
            rank = entry.rank
            playerId = entry.playerPublicID
            displayName = entry.displayName
            score = entry.score
            achievedAt = entry.achievedAt
            gameId = entry.gameID
        }
    }

    struct PageJSON: Encodable {
        var level: String
        var period: String
        /// The board: `2026-01-15`, `2026-W03` or `all`.
        var periodKey: String
        var entries: [EntryJSON]
        /// Send back as `cursor` for the next page; absent on the last page.
        var nextCursor: String?
        var total: Int
        /// When this board starts afresh; absent for all time.
        var resetsAt: Date?
        /// A daily board's day (`daily` only).
        var day: String?
    }

    struct AroundMeJSON: Encodable {
        var level: String
        var period: String
        var periodKey: String
        /// The player's own line; absent when they have no score on this board yet.
        var me: EntryJSON?
        var entries: [EntryJSON]
        var nextCursor: String?
        var total: Int
        var resetsAt: Date?
        var day: String?
    }

    /// GET /api/v1/leaderboards/{level}/{period}?limit=20&cursor=…: public.
    static func top(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let level: SpeedLevel
        let period: LeaderboardPeriod
        let limit: Int
        let daily: DailyBoard?
        do {
            daily = try DailyBoard(request)
            (level, period) = try board(request, daily: daily != nil)
            limit = try APIServices.integerQuery(request, "limit", in: LeaderboardPage.sizeRange, default: 20)
        } catch {
            return responder.respond(error.response)
        }
        let cursor = request.query("cursor").map(LeaderboardCursor.init(rawValue:))
        if let daily {
            return api.run(responder) { storage, now in
                let page = try storage.dailyRoads.top(level: level, day: try daily.day(now: now), limit: limit, after: cursor, now: now)
                return try APIJSON.response(PageJSON(
                    level: level.rawValue, period: DailyBoard.period, periodKey: page.periodKey,
                    entries: page.entries.map(EntryJSON.init), nextCursor: page.nextCursor?.rawValue,
                    total: page.total, resetsAt: page.resetsAt, day: page.day?.text))
            }
        }
        api.run(responder) { storage, now in
            let page = try storage.leaderboards.top(level: level, period: period, limit: limit, after: cursor, now: now)
            return try APIJSON.response(PageJSON(
                level: page.level.rawValue, period: page.period.rawValue, periodKey: page.periodKey,
                entries: page.entries.map(EntryJSON.init), nextCursor: page.nextCursor?.rawValue,
                total: page.total, resetsAt: page.resetsAt))
        }
    }

    /// GET /api/v1/leaderboards/{level}/{period}/around-me?neighbours=5: signed in.
    static func aroundMe(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let level: SpeedLevel
        let period: LeaderboardPeriod
        let neighbours: Int
        let daily: DailyBoard?
        do {
            _ = try APIServices.bearerToken(request)  // 401 before anything else
            daily = try DailyBoard(request)
            (level, period) = try board(request, daily: daily != nil)
            neighbours = try APIServices.integerQuery(request, "neighbours", in: LeaderboardNeighbourhood.neighboursRange, default: 5)
        } catch {
            return responder.respond(error.response)
        }
        if let daily {
            return api.runSignedIn(request, responder) { storage, device, now in
                let day = try daily.day(now: now)
                let around = try storage.dailyRoads.aroundMe(playerID: device.player.id, level: level, day: day, neighbours: neighbours, now: now)
                let total = try around?.total ?? storage.dailyRoads.top(level: level, day: day, limit: 1, now: now).total
                return try APIJSON.response(AroundMeJSON(
                    level: level.rawValue, period: DailyBoard.period, periodKey: day.text, me: around.map { EntryJSON($0.me) },
                    entries: around?.entries.map(EntryJSON.init) ?? [], nextCursor: around?.nextCursor?.rawValue, total: total,
                    resetsAt: day.end, day: day.text))
            }
        }
        api.runSignedIn(request, responder) { storage, device, now in
            if let around = try storage.leaderboards.aroundMe(playerID: device.player.id, level: level, period: period,
                                                              neighbours: neighbours, now: now) {
                return try APIJSON.response(AroundMeJSON(
                    level: level.rawValue, period: period.rawValue, periodKey: around.periodKey,
                    me: EntryJSON(around.me), entries: around.entries.map(EntryJSON.init),
                    nextCursor: around.nextCursor?.rawValue, total: around.total, resetsAt: around.resetsAt))
            }
            let first = try storage.leaderboards.top(level: level, period: period, limit: 1, now: now)
            return try APIJSON.response(AroundMeJSON(
                level: level.rawValue, period: period.rawValue, periodKey: first.periodKey, me: nil, entries: [],
                nextCursor: nil, total: first.total, resetsAt: first.resetsAt))
        }
    }

    /// The level and period named in the path; an unknown one is a board that does not exist.
    /// For a daily board the period returned is unused (`today`).
    static func board(_ request: HTTPRequest, daily: Bool = false) throws(APIError) -> (SpeedLevel, LeaderboardPeriod) {
        guard let level = request.pathParameters["level"].flatMap(SpeedLevel.init(rawValue:)) else {
            throw APIError.notFound("There is no leaderboard for level '\(request.pathParameters["level"] ?? "")'; the levels are \(SpeedLevel.allCases.map(\.rawValue).joined(separator: ", ")).", field: "level")
        }
        if daily { return (level, .today) }
        guard let period = request.pathParameters["period"].flatMap(LeaderboardPeriod.init(rawValue:)) else {
            let periods = LeaderboardPeriod.allCases.map(\.rawValue) + [DailyBoard.period]
            throw APIError.notFound("There is no leaderboard for period '\(request.pathParameters["period"] ?? "")'; the periods are \(periods.joined(separator: ", ")).", field: "period")
        }
        return (level, period)
    }

    /// The daily board named by a request: period `daily` in the path, `?day=` (today when absent).
    struct DailyBoard: Sendable {
        static let period = "daily"
        /// Nil for today (decided on the storage thread, by its clock).
        let day: UTCDay?

        /// Nil when the path names another period; 400 `invalid` (field `day`) for a malformed day.
        init?(_ request: HTTPRequest) throws(APIError) {
            guard request.pathParameters["period"] == Self.period else { return nil }
            guard let text = request.query("day") else {
                day = nil
                return
            }
            guard let day = UTCDay(text) else {
                throw APIError.invalid("'day' must be a UTC day written YYYY-MM-DD, e.g. 2026-12-01.", field: "day")
            }
            self.day = day
        }

        /// The day asked for, or today; a future day is refused by the repository (400 `invalid`, field `day`).
        func day(now: Date) throws -> UTCDay { day ?? UTCDay(containing: now) }
    }
}
