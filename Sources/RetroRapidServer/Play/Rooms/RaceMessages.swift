import RetroRapidRules

/// What the race rooms' server messages carry (`room`, `roomLeft`, `standings`, `raceOver`,
/// `queue`; docs/PROTOCOL.md "Race rooms"), and how each is written. Pure.
struct RoomView: Equatable, Sendable {
    struct Racer: Equatable, Sendable {
        let seat: Int
        let name: String
        let ready: Bool
        let connected: Bool
    }

    let code: RoomCode
    let level: SpeedLevel
    let seats: Int
    let practice: Bool
    let quick: Bool
    let state: RaceRoom.State
    let hostSeat: Int?
    /// The receiver's seat; nil for a watcher.
    let you: Int?
    let racers: [Racer]
    let watchers: Int
    let race: Int

    init(_ room: RaceRoom, you: Int?, watchers: Int) {
        code = room.code
        level = room.level
        seats = room.seats
        practice = room.practice
        quick = room.quick
        state = room.state
        hostSeat = room.hostSeat
        self.you = you
        racers = room.racers.map { Racer(seat: $0.seat, name: $0.name, ready: $0.ready, connected: $0.connected) }
        self.watchers = watchers
        race = room.race
    }

    /// Where a browser opens the room (Web/race.html).
    var link: String { "/race.html?room=\(code.text)" }
}

enum RoomLeftReason: String, Sendable {
    /// The receiver sent leaveRoom.
    case left
    /// The room closed under them (the server is stopping).
    case closed
}

/// A race's results, once every racer's game is saved.
struct RaceOutcome: Equatable, Sendable {
    struct Result: Equatable, Sendable {
        let place: Int
        let seat: Int
        let name: String
        let gameID: String
        let score: Int
        /// The game's end reason, or `time_limit` for a racer still racing at the limit.
        let reason: String
    }

    let code: RoomCode
    /// The stored race's public id (GET /api/v1/races/{raceId}); nil when it could not be saved.
    let raceID: String?
    let results: [Result]
}

struct QueueView: Equatable, Sendable {
    let level: SpeedLevel
    let waiting: Int
    /// Until the room forms; nil while fewer than 2 wait.
    let startsInMilliseconds: Int?
    /// Set on the answer to leaveQueue.
    var left = false
}

enum RaceMessages {
    static func write(_ room: RoomView, into w: inout JSONWriter) {
        w.beginObject()
        w.key("code"); w.string(room.code.text)
        w.key("link"); w.string(room.link)
        w.key("level"); w.string(room.level.rawValue)
        w.key("seats"); w.int(room.seats)
        w.key("practice"); w.bool(room.practice)
        w.key("quick"); w.bool(room.quick)
        w.key("state"); w.string(room.state.rawValue)
        w.key("hostSeat"); if let host = room.hostSeat { w.int(host) } else { w.null() }
        w.key("you"); if let you = room.you { w.int(you) } else { w.null() }
        w.key("racers")
        w.beginArray()
        for racer in room.racers {
            w.beginObject()
            w.key("seat"); w.int(racer.seat)
            w.key("name"); w.string(racer.name)
            w.key("ready"); w.bool(racer.ready)
            w.key("connected"); w.bool(racer.connected)
            w.endObject()
        }
        w.endArray()
        w.key("watchers"); w.int(room.watchers)
        w.key("race"); w.int(room.race)
        w.endObject()
    }

    static func write(_ racers: [RaceStandings.Entry], into w: inout JSONWriter) {
        w.beginArray()
        for racer in racers {
            w.beginObject()
            w.key("seat"); w.int(racer.seat)
            w.key("name"); w.string(racer.name)
            w.key("gameId"); w.string(racer.gameID)
            w.key("score"); w.int(racer.score)
            w.key("lane"); w.int(racer.lane)
            w.key("step"); w.int(racer.step)
            w.key("state"); w.string(racer.state.rawValue)
            w.key("place"); w.int(racer.place)
            w.endObject()
        }
        w.endArray()
    }

    static func write(_ outcome: RaceOutcome, into w: inout JSONWriter) {
        w.key("code"); w.string(outcome.code.text)
        w.key("raceId"); if let id = outcome.raceID { w.string(id) } else { w.null() }
        w.key("results")
        w.beginArray()
        for result in outcome.results {
            w.beginObject()
            w.key("place"); w.int(result.place)
            w.key("seat"); w.int(result.seat)
            w.key("name"); w.string(result.name)
            w.key("gameId"); w.string(result.gameID)
            w.key("score"); w.int(result.score)
            w.key("reason"); w.string(result.reason)
            w.endObject()
        }
        w.endArray()
    }

    static func write(_ queue: QueueView, into w: inout JSONWriter) {
        w.key("level"); w.string(queue.level.rawValue)
        w.key("waiting"); w.int(queue.waiting)
        w.key("startsInMs"); if let ms = queue.startsInMilliseconds { w.int(ms) } else { w.null() }
        if queue.left { w.key("left"); w.bool(true) }
    }
}
