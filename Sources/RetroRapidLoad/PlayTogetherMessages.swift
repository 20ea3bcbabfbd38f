/// The client messages of rooms and watching (docs/PROTOCOL.md), written into a connection's
/// send buffer like the solo messages in `LoadGenerator.writeable`: no allocation per message.
/// Room codes and game ids are our server's own (letters and digits), so they need no escaping.
enum PlayTogetherMessages {
    static func openRoom(_ writer: inout MessageWriter, level: String, seats: Int) {
        writer.append("{\"type\":\"openRoom\",\"level\":\"")
        writer.append(level)
        writer.append("\",\"seats\":")
        writer.append(integer: seats)
        writer.append(",\"practice\":false}")
    }

    static func joinRoom(_ writer: inout MessageWriter, code: [UInt8]) {
        writer.append("{\"type\":\"joinRoom\",\"code\":\"")
        writer.append(bytes: code)
        writer.append("\"}")
    }

    static func ready(_ writer: inout MessageWriter) {
        writer.append("{\"type\":\"ready\",\"ready\":true}")
    }

    static func startRace(_ writer: inout MessageWriter) {
        writer.append("{\"type\":\"startRace\"}")
    }

    /// Watch the racer in `seat` of the room `code`.
    static func watch(_ writer: inout MessageWriter, room code: [UInt8], seat: Int) {
        writer.append("{\"type\":\"watch\",\"room\":\"")
        writer.append(bytes: code)
        writer.append("\",\"seat\":")
        writer.append(integer: seat)
        writer.append("}")
    }

    /// Watch a running game by its id (a solo player's, from its `started`).
    static func watch(_ writer: inout MessageWriter, gameId: [UInt8]) {
        writer.append("{\"type\":\"watch\",\"gameId\":\"")
        writer.append(bytes: gameId)
        writer.append("\"}")
    }
}
