import Foundation
import RetroRapidDomain
import RetroRapidRules

/// A finished race's results over HTTP (docs/API.md), as `raceOver` gave them, with its level
/// and times. Public: a race's finish order is no secret.
enum RaceRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/races/{raceId}") { request, responder in race(request, responder, api) }
    }

    struct ResultJSON: Encodable {
        var place: Int
        var seat: Int
        var playerId: String
        var name: String
        var gameId: String
        var score: Int
        /// The game's end, or `time_limit`.
        var reason: String
    }

    struct RaceJSON: Encodable {
        var raceId: String
        var code: String
        var level: String
        var practice: Bool
        var startedAt: Date
        var endedAt: Date
        var results: [ResultJSON]
    }

    /// GET /api/v1/races/{raceId}.
    static func race(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let raceID = request.pathParameters["raceId"] ?? ""
        api.run(responder) { storage, _ in
            guard raceID.utf8.count <= 64, let race = try storage.races.race(publicID: raceID) else {
                throw APIError(status: 404, code: "race_not_found", message: "No finished race has the id '\(raceID)'.", field: "raceId")
            }
            return try APIJSON.response(RaceJSON(
                raceId: race.publicID, code: race.roomCode, level: race.level.rawValue, practice: race.practice,
                startedAt: race.startedAt, endedAt: race.endedAt,
                results: race.entries.map {
                    ResultJSON(place: $0.place, seat: $0.seat, playerId: $0.playerPublicID, name: $0.displayName, gameId: $0.gameID,
                               score: $0.score, reason: $0.endReason.rawValue)
                }))
        }
    }
}
