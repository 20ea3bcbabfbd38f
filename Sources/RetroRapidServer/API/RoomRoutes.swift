import Foundation

/// `GET /api/v1/rooms/{code}` (docs/API.md): a race room as anyone with its code may see it,
/// for a page opened from an invite link before it connects. Public.
///
/// Threading rule: route handlers run on the service thread, where the `RoomHost` lives, so
/// the room is read directly.
enum RoomRoutes {
    static func add(to router: inout HTTPRouter, rooms: RoomHost, nodeID: String?) {
        router.add(.get, "/api/v1/rooms/{code}") { request, responder in
            let typed = request.pathParameters["code"] ?? ""
            let notFound = APIError(status: 404, code: ProtocolError.Code.roomNotFound.rawValue,
                                    message: "No room has the code '\(typed.prefix(16))'; check it and try again.", field: "code")
            if let room = rooms.publicView(typed) { return respond(RoomJSON(room, node: nodeID), responder) }
            // In a cluster another node may hold it: its place says which (the room itself is there).
            guard let code = RoomCode(reading: typed), nodeID != nil else { return responder.respond(notFound.response) }
            rooms.lookUpPlace(code) { node in
                guard let node else { return responder.respond(notFound.response) }
                respond(RoomJSON(elsewhere: code, node: node), responder)
            }
        }
    }

    private static func respond(_ room: RoomJSON, _ responder: HTTPResponder) {
        do {
            responder.respond(try APIJSON.response(room))
        } catch {
            responder.respond(APIError(status: 500, code: "internal", message: "The room could not be written.").response)
        }
    }

    struct RacerJSON: Encodable {
        var seat: Int
        var name: String
        var ready: Bool
        var connected: Bool
    }

    /// A room here in full; another node's as its code and node, the rest null.
    struct RoomJSON: Encodable {
        var code: String
        var link: String
        var level: String?
        var seats: Int?
        var racers: [RacerJSON]?
        var state: String?
        var practice: Bool?
        var quick: Bool?
        var race: Int?
        /// The node that holds the room (cluster mode); nil on a single server.
        var node: String?

        init(_ room: RoomView, node: String?) {
            code = room.code.text
            link = room.link
            level = room.level.rawValue
            seats = room.seats
            racers = room.racers.map { RacerJSON(seat: $0.seat, name: $0.name, ready: $0.ready, connected: $0.connected) }
            state = room.state.rawValue
            practice = room.practice
            quick = room.quick
            race = room.race
            self.node = node
        }

        init(elsewhere code: RoomCode, node: String) {
            self.code = code.text
            link = "/race.html?room=\(code.text)"
            self.node = node
        }

        enum CodingKeys: String, CodingKey { case code, link, level, seats, racers, state, practice, quick, race, node }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            try container.encode(link, forKey: .link)
            try container.encode(level, forKey: .level)
            try container.encode(seats, forKey: .seats)
            try container.encode(racers, forKey: .racers)
            try container.encode(state, forKey: .state)
            try container.encode(practice, forKey: .practice)
            try container.encode(quick, forKey: .quick)
            try container.encode(race, forKey: .race)
            try container.encode(node, forKey: .node)  // null, not absent, on a single server
        }
    }
}
