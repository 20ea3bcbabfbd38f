import Foundation
import RetroRapidRules
import RetroRapidDomain

/// Leaderboards per speed level for today (UTC), this week and all time (docs/API.md): the top
/// with keyset paging (`cursor` from the previous page), and the signed-in player's own rank
/// with the lines around it. Both say when the board resets.
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

        init(_ entry: LeaderboardEntry) {
            rank = entry.rank
            playerId = entry.playerPublicID
            displayName = entry.displayName
            score = entry.score
            achievedAt = entry.achievedAt
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
    }

    /// GET /api/v1/leaderboards/{level}/{period}?limit=20&cursor=…: public.
    static func top(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let level: SpeedLevel
        let period: LeaderboardPeriod
        let limit: Int
        do {
            (level, period) = try board(request)
            limit = try APIServices.integerQuery(request, "limit", in: LeaderboardPage.sizeRange, default: 20)
        } catch {
            return responder.respond(error.response)
        }
        let cursor = request.query("cursor").map(LeaderboardCursor.init(rawValue:))
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
        do {
            _ = try APIServices.bearerToken(request)  // 401 before anything else
            (level, period) = try board(request)
            neighbours = try APIServices.integerQuery(request, "neighbours", in: LeaderboardNeighbourhood.neighboursRange, default: 5)
        } catch {
            return responder.respond(error.response)
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
    static func board(_ request: HTTPRequest) throws(APIError) -> (SpeedLevel, LeaderboardPeriod) {
        guard let level = request.pathParameters["level"].flatMap(SpeedLevel.init(rawValue:)) else {
            throw APIError.notFound("There is no leaderboard for level '\(request.pathParameters["level"] ?? "")'; the levels are \(SpeedLevel.allCases.map(\.rawValue).joined(separator: ", ")).", field: "level")
        }
        guard let period = request.pathParameters["period"].flatMap(LeaderboardPeriod.init(rawValue:)) else {
            throw APIError.notFound("There is no leaderboard for period '\(request.pathParameters["period"] ?? "")'; the periods are \(LeaderboardPeriod.allCases.map(\.rawValue).joined(separator: ", ")).", field: "period")
        }
        return (level, period)
    }
}
