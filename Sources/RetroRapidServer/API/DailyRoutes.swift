import Foundation
import RetroRapidDomain
import RetroRapidRules

/// The daily road of a level for the signed-in player (docs/API.md): today's day, when the
/// next road comes, and their one scored attempt if they made it. The board itself is a
/// leaderboard period (`LeaderboardRoutes`, `/leaderboards/{level}/daily`).
enum DailyRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/daily/{level}") { request, responder in daily(request, responder, api) }
    }

    struct AttemptJSON: Encodable {
        var gameId: String
        /// Absent while the game still runs.
        var score: Int?
        var rank: Int?
    }

    struct DailyJSON: Encodable {
        var day: String
        var level: String
        var resetsAt: Date
        /// Null until the player has made today's scored attempt at this level.
        var scoredAttempt: AttemptJSON?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(day, forKey: .day)
            try container.encode(level, forKey: .level)
            try container.encode(resetsAt, forKey: .resetsAt)
            try container.encode(scoredAttempt, forKey: .scoredAttempt)  // null, not absent
        }

        enum CodingKeys: String, CodingKey { case day, level, resetsAt, scoredAttempt }
    }

    /// GET /api/v1/daily/{level}: signed in.
    static func daily(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let level: SpeedLevel
        do {
            _ = try APIServices.bearerToken(request)
            guard let named = request.pathParameters["level"].flatMap(SpeedLevel.init(rawValue:)) else {
                throw APIError.notFound("There is no daily road for level '\(request.pathParameters["level"] ?? "")'; the levels are \(SpeedLevel.allCases.map(\.rawValue).joined(separator: ", ")).", field: "level")
            }
            level = named
        } catch {
            return responder.respond(APIError(error).response)
        }
        api.runSignedIn(request, responder) { storage, device, now in
            let day = UTCDay(containing: now)
            let attempt = try storage.dailyRoads.attempt(playerID: device.player.id, level: level, day: day)
            return try APIJSON.response(DailyJSON(
                day: day.text, level: level.rawValue, resetsAt: day.end,
                scoredAttempt: attempt.map { AttemptJSON(gameId: $0.gameID, score: $0.score, rank: $0.rank) }))
        }
    }
}
