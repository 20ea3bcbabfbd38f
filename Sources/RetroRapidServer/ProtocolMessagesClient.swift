import RetroRapidRules

/// What a client may send on `/ws` (subprotocol `retrorapid.v1`); docs/PROTOCOL.md has an
/// example of each. Every message is a JSON object with a `type`; fields a type does not use
/// are ignored, so a newer client can talk to this server.
enum ClientMessage: Equatable, Sendable {
    /// Must be the first message. The token never goes in a URL (logs and proxies keep URLs).
    case hello(token: String, client: String?)
    /// Starts a game; `practice` games consume no play and score nothing.
    case start(level: SpeedLevel, practice: Bool)
    /// A lane change, made by a player who had seen step `step` (the grace rule's input).
    case move(direction: Direction, seenStep: Int)
    case pause
    /// Resumes a paused game, or after a reconnect takes the player's waiting game back.
    case resume
    /// Ends the running game now; it is saved as abandoned.
    case quit
    /// Answered with `pong`; keeps an otherwise silent connection from the idle timeout.
    case ping

    /// The `type` names, for error messages and metrics.
    static let typeNames = ["hello", "start", "move", "pause", "resume", "quit", "ping"]

    /// Longest client label kept (it is only logged).
    static let maximumClientLabelLength = 128

    /// Reads one complete message. Every failure is a `ProtocolError` that names the field.
    static func decode(_ bytes: [UInt8]) throws(ProtocolError) -> ClientMessage {
        let raw: RawClientMessage
        do {
            raw = try ClientMessageReader.read(bytes)
        } catch {
            throw refusal(for: error)
        }
        return try raw.message()
    }

    private static func refusal(for failure: ClientMessageReader.Failure) -> ProtocolError {
        switch failure {
        case .notJSON:
            ProtocolError(.badJSON, "The message is not valid JSON: send one JSON object per WebSocket text message.")
        case .notAnObject:
            ProtocolError(.badMessage, "The message must be a JSON object with a \"type\" field.")
        case .wrongType(let field):
            ProtocolError(.badMessage, "The field \"\(field)\" has the wrong type.")
        }
    }
}

/// Every field any message may have, all optional: the type decides which it needs, so a
/// missing or wrong field gets a message that names it rather than a generic decoding error.
/// Filled by `ClientMessageReader` (both `package` for its fuzz target, Sources/RetroRapidFuzz).
package struct RawClientMessage: Equatable {
    package var type: String?
    package var token: String?
    package var client: String?
    package var level: String?
    package var practice: Bool?
    package var direction: String?
    package var step: Int?

    func message() throws(ProtocolError) -> ClientMessage {
        guard let type else {
            throw ProtocolError(.badMessage, "The message has no \"type\"; it must be one of \(Self.typeList).")
        }
        switch type {
        case "hello":
            guard let token, !token.isEmpty else {
                throw ProtocolError(.badMessage, "hello needs a \"token\": the device token from sign-up or linking.", inReplyTo: type)
            }
            return .hello(token: token, client: client.map { String($0.prefix(ClientMessage.maximumClientLabelLength)) })
        case "start":
            guard let name = level else {
                throw ProtocolError(.badMessage, "start needs a \"level\": one of \(Self.levelList).", inReplyTo: type)
            }
            guard let level = SpeedLevel(rawValue: name) else {
                throw ProtocolError(.badMessage, "\"\(name)\" is not a level; use one of \(Self.levelList).", inReplyTo: type)
            }
            return .start(level: level, practice: practice ?? false)
        case "move":
            guard let name = direction else {
                throw ProtocolError(.badMessage, "move needs a \"direction\": \"left\" or \"right\".", inReplyTo: type)
            }
            guard let direction = Direction(rawValue: name) else {
                throw ProtocolError(.badMessage, "\"\(name)\" is not a direction; use \"left\" or \"right\".", inReplyTo: type)
            }
            guard let step else {
                throw ProtocolError(.badMessage, "move needs a \"step\": the number of the last step message the player saw.", inReplyTo: type)
            }
            return .move(direction: direction, seenStep: step)
        case "pause": return .pause
        case "resume": return .resume
        case "quit": return .quit
        case "ping": return .ping
        default:
            throw ProtocolError(.unknownType, "\"\(type.prefix(40))\" is not a message type; use one of \(Self.typeList).")
        }
    }

    private static let typeList = ClientMessage.typeNames.joined(separator: ", ")
    private static let levelList = SpeedLevel.allCases.map(\.rawValue).joined(separator: ", ")
}
