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
        try read(bytes).message()
    }

    /// The first half of `decode`: the JSON read, the fields not judged yet. Fails with
    /// `bad_json` for text that is not JSON and `bad_message` for JSON that is not an object.
    static func read(_ bytes: [UInt8]) throws(ProtocolError) -> RawClientMessage {
        do {
            return try ClientMessageReader.read(bytes)
        } catch {
            switch error {
            case .notJSON:
                throw ProtocolError(.badJSON, "The message is not valid JSON: send one JSON object per WebSocket text message.")
            case .notAnObject:
                throw ProtocolError(.badMessage, "The message must be a JSON object with a \"type\" field.")
            }
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
    /// Known fields that held the wrong kind of value (left nil above). Only a type that uses
    /// one refuses the message: the others ignore it like any field they do not use.
    package var wrongFields: Fields = []

    package struct Fields: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let type = Fields(rawValue: 1 << 0)
        package static let token = Fields(rawValue: 1 << 1)
        package static let client = Fields(rawValue: 1 << 2)
        package static let level = Fields(rawValue: 1 << 3)
        package static let practice = Fields(rawValue: 1 << 4)
        package static let direction = Fields(rawValue: 1 << 5)
        package static let step = Fields(rawValue: 1 << 6)

        /// Each field with its name and the kind of value it takes, in the order checked.
        static let described: [(field: Fields, name: String, kind: String)] = [
            (.type, "type", "a string"), (.token, "token", "a string"), (.client, "client", "a string"),
            (.level, "level", "a string"), (.practice, "practice", "true or false"),
            (.direction, "direction", "a string"), (.step, "step", "a whole number"),
        ]
    }

    /// The fields each type reads; every other field is ignored, whatever it holds.
    static let fieldsUsed: [String: Fields] = [
        "hello": [.token, .client], "start": [.level, .practice], "move": [.direction, .step],
    ]

    /// `bad_message` naming the first of `fields` that held the wrong kind of value.
    private func checkKinds(_ fields: Fields, inReplyTo type: String?) throws(ProtocolError) {
        let wrong = wrongFields.intersection(fields)
        guard !wrong.isEmpty, let first = Fields.described.first(where: { wrong.contains($0.field) }) else { return }
        let what = type.map { "\($0) needs" } ?? "The message needs"
        throw ProtocolError(.badMessage, "\(what) \(first.kind) in \"\(first.name)\".", inReplyTo: type)
    }

    func message() throws(ProtocolError) -> ClientMessage {
        try checkKinds(.type, inReplyTo: nil)
        guard let type else {
            throw ProtocolError(.badMessage, "The message has no \"type\"; it must be one of \(Self.typeList).")
        }
        try checkKinds(Self.fieldsUsed[type] ?? [], inReplyTo: type)
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
