import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Stored games over HTTP (docs/API.md): the signed-in player's recent games, newest first,
/// and any stored game's public summary, with whether its replay may be watched: every game
/// but another player's daily game of today (its road is today's, not to be given away).
enum GameRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/me/games") { request, responder in myGames(request, responder, api) }
        router.add(.get, "/api/v1/games/{gameId}") { request, responder in game(request, responder, api) }
    }

    struct MyGameJSON: Encodable {
        /// Absent only for games stored before game ids.
        var gameId: String?
        var level: String
        var score: Int
        var steps: Int
        var reason: String
        var practice: Bool
        /// `random`, `daily` or `ghost`.
        var road: String
        /// The daily road's day (`daily` only).
        var day: String?
        /// The race it was part of.
        var race: String?
        var startedAt: Date
        var endedAt: Date
    }

    struct MyGamesJSON: Encodable {
        var games: [MyGameJSON]
        /// Send back as `before` for the next page; absent on the last.
        var nextBefore: String?
    }

    struct GameJSON: Encodable {
        struct PlayerJSON: Encodable {
            var playerId: String
            var name: String
        }

        var gameId: String
        var player: PlayerJSON
        var level: String
        var score: Int
        var steps: Int
        var reason: String
        var practice: Bool
        var road: String
        var day: String?
        var endedAt: Date
        /// False for another player's daily game of today: its replay opens when the day ends.
        var replayable: Bool
    }

    /// GET /api/v1/me/games?limit=20&before=GAMEID: signed in.
    static func myGames(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let limit: Int
        let before = request.query("before")
        do {
            _ = try APIServices.bearerToken(request)
            limit = try APIServices.integerQuery(request, "limit", in: 1...100, default: 20)
            if let before, before.isEmpty || before.utf8.count > 64 {
                throw APIError.invalid("'before' must be the gameId of one of your games (nextBefore of the previous page).", field: "before")
            }
        } catch {
            return responder.respond(APIError(error).response)
        }
        api.runSignedIn(request, responder) { storage, device, _ in
            var beforeRow: Int64?
            if let before {
                guard let game = try storage.games.game(publicID: before), game.playerID == device.player.id else {
                    throw APIError.invalid("'before' must be the gameId of one of your games (nextBefore of the previous page).", field: "before")
                }
                beforeRow = game.id
            }
            let page = try storage.games.games(playerID: device.player.id, limit: limit + 1, before: beforeRow)
            let shown = Array(page.prefix(limit))
            let races = try storage.races.raceIDs(forGames: shown.compactMap(\.publicID))
            return try APIJSON.response(MyGamesJSON(
                games: shown.map { game in
                    MyGameJSON(gameId: game.publicID, level: game.level.rawValue, score: game.score, steps: game.steps,
                               reason: game.endReason.rawValue, practice: game.practice, road: game.road.name,
                               day: game.road.day?.text, race: game.publicID.flatMap { races[$0] },
                               startedAt: game.startedAt, endedAt: game.endedAt)
                },
                nextBefore: page.count > limit ? shown.last?.publicID : nil))
        }
    }

    /// GET /api/v1/games/{gameId}: public; with a device token, the player's own daily game of
    /// today is replayable to them.
    static func game(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let gameID = request.pathParameters["gameId"] ?? ""
        let signedIn = request[header: "authorization"] != nil
        if signedIn {
            api.runSignedIn(request, responder) { storage, device, now in try summary(gameID, storage, viewer: device.player.id, now: now) }
        } else {
            api.run(responder) { storage, now in try summary(gameID, storage, viewer: nil, now: now) }
        }
    }

    /// The summary of `gameID` as `viewer` (nil: nobody signed in) may see it.
    static func summary(_ gameID: String, _ storage: StorageContext, viewer: Int64?, now: Date) throws -> HTTPResponse {
        guard gameID.utf8.count <= 64, let game = try storage.games.game(publicID: gameID) else {
            throw notFound(gameID)
        }
        let player = try storage.players.player(id: game.playerID)
        let hidden = game.road.day == UTCDay(containing: now) && game.playerID != viewer
        return try APIJSON.response(GameJSON(
            gameId: gameID, player: .init(playerId: player.publicID, name: player.displayName), level: game.level.rawValue,
            score: game.score, steps: game.steps, reason: game.endReason.rawValue, practice: game.practice,
            road: game.road.name, day: game.road.day?.text, endedAt: game.endedAt, replayable: !hidden))
    }

    static func notFound(_ gameID: String) -> APIError {
        APIError(status: 404, code: "game_not_found", message: "No stored game has the id '\(gameID)' (a game still running is not stored yet).",
                 field: "gameId")
    }
}
