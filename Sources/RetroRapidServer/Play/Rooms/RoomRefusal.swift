/// Why a room, the registry or the quick-race queue refused a request: a protocol error code
/// and a sentence that says what to do. Refusals change nothing (the types check before they
/// change anything). `RoomHost` sends them as `error` messages.
struct RoomRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    let code: ProtocolError.Code
    let message: String

    var description: String { "\(code): \(message)" }

    func error(inReplyTo type: String) -> ProtocolError {
        ProtocolError(code, message, inReplyTo: type)
    }

    static func alreadyInRoom(_ code: RoomCode, same: Bool) -> RoomRefusal {
        RoomRefusal(code: .alreadyInRoom, message: same
            ? "You are already in room \(code)."
            : "You are in room \(code): send leaveRoom before opening or joining another.")
    }
    static let notInRoom = RoomRefusal(code: .notInRoom, message: "You are not in a room: open one or join one by its code.")
    static func roomNotFound(_ typed: String) -> RoomRefusal {
        RoomRefusal(code: .roomNotFound, message: "No room has the code '\(typed)'; check it and try again.")
    }
    static func roomFull(_ code: RoomCode, seats: Int) -> RoomRefusal {
        RoomRefusal(code: .roomFull, message: "Room \(code) is full (\(seats) seats).")
    }
    static func raceRunning(_ code: RoomCode) -> RoomRefusal {
        RoomRefusal(code: .raceRunning, message: "Room \(code) is racing now: you may watch it, or wait for it to end.")
    }
    static let notHost = RoomRefusal(code: .notHost, message: "Only the room's host can start the race.")
    static func notReady(_ message: String) -> RoomRefusal { RoomRefusal(code: .notReady, message: message) }
    static func tooManyRooms(_ limit: Int) -> RoomRefusal {
        RoomRefusal(code: .tooManyRooms, message: "This server has \(limit) rooms open, its limit; try again later.")
    }
    static let alreadyInQueue = RoomRefusal(code: .alreadyInQueue, message: "You are already waiting for a quick race.")
    static let notInQueue = RoomRefusal(code: .notInQueue, message: "You are not waiting for a quick race.")
}
