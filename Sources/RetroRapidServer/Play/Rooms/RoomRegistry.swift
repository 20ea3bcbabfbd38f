import RetroRapidRules

/// Every room open on this node, by code and by player (a player is in at most one room), up
/// to `maxRooms`. Opening draws a code no open room has; the last racer out closes the room.
///
/// Threading rule: owned by the `RoomHost` on the libwebsockets service thread.
final class RoomRegistry {
    let maxRooms: Int
    /// 64 random bits per code drawn: the system's CSPRNG, or a seeded source in tests.
    private let random: () -> UInt64
    private var rooms: [RoomCode: RaceRoom] = [:]
    private var roomByPlayer: [Int64: RoomCode] = [:]

    init(maxRooms: Int, random: @escaping () -> UInt64 = { UInt64.random(in: .min ... .max) }) {
        self.maxRooms = maxRooms
        self.random = random
    }

    var count: Int { rooms.count }
    var allRooms: some Collection<RaceRoom> { rooms.values }

    func room(_ code: RoomCode) -> RaceRoom? { rooms[code] }
    func room(of playerID: Int64) -> RaceRoom? { roomByPlayer[playerID].flatMap { rooms[$0] } }

    /// A new room with the player as host in seat 0. `isTaken` says whether a code is in use
    /// elsewhere (another node's room, in cluster mode), so a code is never handed out twice.
    func open(level: SpeedLevel, seats: Int, practice: Bool, quick: Bool, hostID: Int64, hostName: String,
              isTaken: (RoomCode) -> Bool = { _ in false }) throws(RoomRefusal) -> RaceRoom {
        if let code = roomByPlayer[hostID] { throw .alreadyInRoom(code, same: false) }
        guard rooms.count < maxRooms else { throw .tooManyRooms(maxRooms) }
        var code = RoomCode(random: random)
        // A billion codes and at most a few thousand rooms: a repeat is rare, two in a row rarer.
        while rooms[code] != nil || isTaken(code) { code = RoomCode(random: random) }
        let room = RaceRoom(code: code, level: level, seats: seats, practice: practice, quick: quick,
                            hostID: hostID, hostName: hostName)
        rooms[code] = room
        roomByPlayer[hostID] = code
        return room
    }

    /// Seats the player in the room the typed code names.
    func join(typed: String, playerID: Int64, name: String) throws(RoomRefusal) -> (room: RaceRoom, seat: Int) {
        guard let code = RoomCode(reading: typed), let room = rooms[code] else { throw .roomNotFound(typed) }
        if let current = roomByPlayer[playerID] { throw .alreadyInRoom(current, same: current == code) }
        let seat = try room.join(playerID: playerID, name: name)
        roomByPlayer[playerID] = code
        return (room, seat)
    }

    /// Takes the player out of their room; the room closes when it is left empty (`closed`).
    func leave(playerID: Int64) throws(RoomRefusal) -> (room: RaceRoom, departure: RaceRoom.Departure, closed: Bool) {
        guard let room = room(of: playerID) else { throw .notInRoom }
        let departure = try room.leave(playerID: playerID)
        roomByPlayer[playerID] = nil
        let closed = room.isEmpty
        if closed { rooms[room.code] = nil }
        return (room, departure, closed)
    }
}
