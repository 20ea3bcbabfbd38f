import RetroRapidRules

/// What a client may send on `/ws` (subprotocol `retrorapid.v1`); docs/PROTOCOL.md has an
/// example of each. Every message is a JSON object with a `type`; fields a type does not use
/// are ignored, so a newer client can talk to this server.
enum ClientMessage: Equatable, Sendable {
    /// Must be the first message. The token never goes in a URL (logs and proxies keep URLs).
    case hello(token: String, client: String?)
    /// Starts a game; `practice` games consume no play and score nothing. `road` is a random
    /// road of its own, or the day's shared road of the level (docs/PROTOCOL.md "The daily road").
    case start(level: SpeedLevel, practice: Bool, road: StartRoad = .random)
    /// A lane change, made by a player who had seen step `step` (the grace rule's input).
    case move(direction: Direction, seenStep: Int)
    case pause
    /// Resumes a paused game, or after a reconnect takes the player's waiting game back.
    case resume
    /// Ends the running game now; it is saved as abandoned.
    case quit
    /// Answered with `pong`; keeps an otherwise silent connection from the idle timeout.
    case ping
    // Race rooms (docs/PROTOCOL.md "Race rooms").
    /// Opens a race room with the sender as host; `seats` 2–8.
    case openRoom(level: SpeedLevel, seats: Int, practice: Bool)
    /// Joins a room by its code as typed (case and spaces or dashes do not matter).
    case joinRoom(code: String)
    case ready(Bool)
    /// The host starts the race.
    case startRace
    case leaveRoom
    /// Waits for a quick race at `level`.
    case quickRace(level: SpeedLevel)
    case leaveQueue
    /// Watches a running game: by its id, or a race room's seat (the first racer's when nil).
    case watch(WatchTarget)
    case stopWatching
    /// Replays a stored game (docs/PROTOCOL.md, "Replays and ghosts").
    case replay(gameID: String)
    /// Pauses, plays or seeks the connection's replay.
    case replayControl(ReplayControl)
    /// A practice game on a stored game's road, its run beside the player's as a ghost.
    case raceGhost(gameID: String)

    enum ReplayControl: Equatable, Sendable {
        case pause
        case play
        case seek(step: Int)
    }

    enum WatchTarget: Equatable, Sendable {
        case game(String)
        case room(code: String, seat: Int?)
    }

    /// The road a `start` asks for.
    enum StartRoad: String, Sendable {
        case random
        case daily
    }

    /// The `type` names, for error messages and metrics.
    static let typeNames = ["hello", "start", "move", "pause", "resume", "quit", "ping", "watch", "stopWatching",
                            "openRoom", "joinRoom", "ready", "startRace", "leaveRoom", "quickRace", "leaveQueue",
                            "replay", "replayControl", "raceGhost"]

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
/// Each field is declared once, in `fields`: its name, the type that reads it, its kind, and
/// whether it is required and cut to a length. `JSONObjectReader` knows none of them
/// (ClientMessageReader.swift joins the two; both `package` for the fuzz target,
/// Sources/RetroRapidFuzz).
package struct RawClientMessage: Equatable, JSONObjectFields {
    package var type: String?
    package var token: String?
    package var client: String?
    package var level: String?
    package var practice: Bool?
    package var direction: String?
    package var step: Int?
    package var seats: Int?
    package var code: String?
    package var ready: Bool?
    package var gameId: String?
    package var room: String?
    package var seat: Int?
    package var road: String?
    package var action: String?
    /// Known fields that held the wrong kind of value (left nil above). Only a type that uses
    /// one refuses the message: the others ignore it like any field they do not use.
    package var wrongFields: Fields = []

    package init() {}

    package struct Fields: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package static let type = Fields(rawValue: 1 << 0)
        package static let token = Fields(rawValue: 1 << 1)
        package static let client = Fields(rawValue: 1 << 2)
        package static let level = Fields(rawValue: 1 << 3)
        package static let practice = Fields(rawValue: 1 << 4)
        package static let direction = Fields(rawValue: 1 << 5)
        package static let step = Fields(rawValue: 1 << 6)
        package static let gameId = Fields(rawValue: 1 << 7)
        package static let room = Fields(rawValue: 1 << 8)
        package static let seat = Fields(rawValue: 1 << 9)
        package static let seats = Fields(rawValue: 1 << 10)
        package static let code = Fields(rawValue: 1 << 11)
        package static let ready = Fields(rawValue: 1 << 12)
        package static let road = Fields(rawValue: 1 << 13)
        package static let action = Fields(rawValue: 1 << 14)
    }

    /// One field as the wire has it.
    struct Field: Sendable {
        /// Its kind of value, and where in a `RawClientMessage` it is kept: a key path resolved
        /// once into its property's offset, as applying a key path (or calling a closure held
        /// in the table) costs more than the rest of reading a member.
        enum Slot: Sendable {
            case string(offset: Int)
            case bool(offset: Int)
            case integer(offset: Int)

            static func string(_ path: WritableKeyPath<RawClientMessage, String?>) -> Slot { .string(offset: offset(path)) }
            static func bool(_ path: WritableKeyPath<RawClientMessage, Bool?>) -> Slot { .bool(offset: offset(path)) }
            static func integer(_ path: WritableKeyPath<RawClientMessage, Int?>) -> Slot { .integer(offset: offset(path)) }

            private static func offset<Value>(_ path: WritableKeyPath<RawClientMessage, Value>) -> Int {
                MemoryLayout<RawClientMessage>.offset(of: path)!  // nil only for a computed property
            }
        }

        let flag: Fields
        let name: StaticString
        /// The message type that reads it; nil for `type`, which every message has.
        let usedBy: String?
        /// Other message types that read it.
        var alsoUsedBy: [String] = []
        /// Its kind of value and where it is kept.
        let slot: Slot
        /// For a field its type cannot do without: what to send, said when it is missing (and,
        /// for a field of named values, when it is none of them).
        var required: String? = nil
        /// Whether an empty string counts as missing.
        var requiredNonEmpty = false
        /// Longer strings are cut to this many characters.
        var maximumLength: Int? = nil

        /// The kind, in a refusal's words.
        var kind: String {
            switch slot {
            case .string: "a string"
            case .bool: "true or false"
            case .integer: "a whole number"
            }
        }
    }

    /// Every field, in the order refusals check them.
    static let fields: [Field] = [
        Field(flag: .type, name: "type", usedBy: nil, slot: .string(\.type)),
        Field(flag: .token, name: "token", usedBy: "hello", slot: .string(\.token),
              required: "the device token from sign-up or linking", requiredNonEmpty: true),
        // Only logged.
        Field(flag: .client, name: "client", usedBy: "hello", slot: .string(\.client), maximumLength: 128),
        Field(flag: .level, name: "level", usedBy: "start", alsoUsedBy: ["openRoom", "quickRace"], slot: .string(\.level),
              required: "one of \(levelList)"),
        Field(flag: .practice, name: "practice", usedBy: "start", alsoUsedBy: ["openRoom"], slot: .bool(\.practice)),
        Field(flag: .road, name: "road", usedBy: "start", slot: .string(\.road), required: #""random" or "daily""#),
        Field(flag: .direction, name: "direction", usedBy: "move", slot: .string(\.direction), required: #""left" or "right""#),
        Field(flag: .step, name: "step", usedBy: "move", alsoUsedBy: ["replayControl"], slot: .integer(\.step),
              required: "the number of the last step message the player saw"),
        Field(flag: .seats, name: "seats", usedBy: "openRoom", slot: .integer(\.seats)),
        Field(flag: .code, name: "code", usedBy: "joinRoom", slot: .string(\.code),
              required: "the room's invite code, such as K7QXM2", requiredNonEmpty: true),
        Field(flag: .ready, name: "ready", usedBy: "ready", slot: .bool(\.ready)),
        Field(flag: .gameId, name: "gameId", usedBy: "watch", alsoUsedBy: ["replay", "raceGhost"], slot: .string(\.gameId), maximumLength: 64),
        Field(flag: .room, name: "room", usedBy: "watch", slot: .string(\.room), maximumLength: 64),
        Field(flag: .seat, name: "seat", usedBy: "watch", slot: .integer(\.seat)),
        Field(flag: .action, name: "action", usedBy: "replayControl", slot: .string(\.action),
              required: #""pause", "play" or "seek""#),
    ]

    /// Every field's wire name and every message type, for the fuzz target's checks
    /// (Sources/RetroRapidFuzz/ClientMessageFuzzTarget.swift), which must cover them all.
    package static var fieldNames: [String] { fields.map { "\($0.name)" } }
    package static var typeNames: [String] { ClientMessage.typeNames }

    /// The fields each type reads; every other field is ignored, whatever it holds.
    static let fieldsUsed: [String: Fields] = fields.reduce(into: [:]) { used, field in
        for type in (field.usedBy.map { [$0] } ?? []) + field.alsoUsedBy { used[type, default: []].insert(field.flag) }
    }

    private static func field(_ flag: Fields) -> Field {
        fields.first { $0.flag == flag }!
    }

    // MARK: Reading

    package mutating func readMember(_ name: JSONObjectReader.MemberName, from reader: inout JSONObjectReader) throws(JSONObjectReader.Failure) {
        let fields = Self.fields
        // Compared in place: copying a `Field` out costs more than reading its value.
        var index = 0
        while index < fields.count, !name.is(fields[index].name) { index += 1 }
        guard index < fields.count else { return try reader.skipValue() }
        // A later member of the same name replaces an earlier one, value and kind alike.
        let fits = switch fields[index].slot {
        case .string(let offset): keep(try reader.string(), at: offset)
        case .bool(let offset): keep(try reader.bool(), at: offset)
        case .integer(let offset): keep(try reader.integer(), at: offset)
        }
        if fits { wrongFields.remove(fields[index].flag) } else { wrongFields.insert(fields[index].flag) }
    }

    /// Keeps a value read (nil for null or the wrong kind) in the property at `offset`, which
    /// `Slot` took from a key path to a `Wanted?`; false for the wrong kind.
    private mutating func keep<Wanted>(_ value: JSONObjectReader.Value<Wanted>, at offset: Int) -> Bool {
        let kept: Wanted?
        switch value {
        case .value(let value): kept = value
        case .null, .otherKind: kept = nil
        }
        withUnsafeMutableBytes(of: &self) { message in
            message.baseAddress!.advanced(by: offset).assumingMemoryBound(to: Wanted?.self).pointee = kept
        }
        if case .otherKind = value { return false }
        return true
    }

    // MARK: Judging

    /// `bad_message` naming the first of `fields` that held the wrong kind of value.
    private func checkKinds(_ fields: Fields, inReplyTo type: String?) throws(ProtocolError) {
        let wrong = wrongFields.intersection(fields)
        guard !wrong.isEmpty, let first = Self.fields.first(where: { wrong.contains($0.flag) }) else { return }
        let what = type.map { "\($0) needs" } ?? "The message needs"
        throw ProtocolError(.badMessage, "\(what) \(first.kind) in \"\(first.name)\".", inReplyTo: type)
    }

    // The table is only looked at to refuse, or for hello (once a connection): looking a
    // field up costs more than judging a move.

    /// A required field's value, or `bad_message` saying what to send.
    private func required(_ value: String?, _ flag: Fields, by type: String) throws(ProtocolError) -> String {
        if let value, !value.isEmpty { return value }
        let field = Self.field(flag)
        if let value, !field.requiredNonEmpty { return value }
        throw missing(field, by: type)
    }

    private func required(_ value: Int?, _ flag: Fields, by type: String) throws(ProtocolError) -> Int {
        guard let value else { throw missing(Self.field(flag), by: type) }
        return value
    }

    /// A required field that names one of `Choice`'s values.
    private func choice<Choice: RawRepresentable>(_ value: String?, _ flag: Fields, by type: String) throws(ProtocolError) -> Choice
    where Choice.RawValue == String {
        let name = try required(value, flag, by: type)
        guard let choice = Choice(rawValue: name) else {
            let field = Self.field(flag)
            throw ProtocolError(.badMessage, "\"\(name)\" is not a \(field.name); use \(field.required!).", inReplyTo: type)
        }
        return choice
    }

    /// An optional string cut to its field's length.
    private func limited(_ value: String?, _ flag: Fields) -> String? {
        guard let value, let maximum = Self.field(flag).maximumLength else { return value }
        return String(value.prefix(maximum))
    }

    private func missing(_ field: Field, by type: String) -> ProtocolError {
        ProtocolError(.badMessage, "\(type) needs a \"\(field.name)\": \(field.required!).", inReplyTo: type)
    }

    func message() throws(ProtocolError) -> ClientMessage {
        try checkKinds(.type, inReplyTo: nil)
        guard let type else {
            throw ProtocolError(.badMessage, "The message has no \"type\"; it must be one of \(Self.typeList).")
        }
        try checkKinds(Self.fieldsUsed[type] ?? [], inReplyTo: type)
        switch type {
        case "hello": return .hello(token: try required(token, .token, by: type), client: limited(client, .client))
        case "start":
            let level: SpeedLevel = try choice(level, .level, by: type)
            let chosen: ClientMessage.StartRoad = road == nil ? .random : try choice(road, .road, by: type)
            return .start(level: level, practice: practice ?? false, road: chosen)
        case "move": return .move(direction: try choice(direction, .direction, by: type), seenStep: try required(step, .step, by: type))
        case "pause": return .pause
        case "resume": return .resume
        case "quit": return .quit
        case "ping": return .ping
        case "openRoom":
            let seats = self.seats ?? RaceRoom.defaultSeats
            guard RaceRoom.seatRange.contains(seats) else {
                throw ProtocolError(.badMessage, "openRoom needs \"seats\" from \(RaceRoom.seatRange.lowerBound) to "
                    + "\(RaceRoom.seatRange.upperBound), got \(seats).", inReplyTo: type)
            }
            return .openRoom(level: try choice(level, .level, by: type), seats: seats, practice: practice ?? false)
        case "joinRoom": return .joinRoom(code: String(try required(code, .code, by: type).prefix(64)))
        case "ready": return .ready(ready ?? true)
        case "startRace": return .startRace
        case "leaveRoom": return .leaveRoom
        case "quickRace": return .quickRace(level: try choice(level, .level, by: type))
        case "leaveQueue": return .leaveQueue
        case "watch": return .watch(try watchTarget())
        case "stopWatching": return .stopWatching
        case "replay": return .replay(gameID: try storedGameID(by: type))
        case "raceGhost": return .raceGhost(gameID: try storedGameID(by: type))
        case "replayControl": return .replayControl(try replayControl())
        default:
            throw ProtocolError(.unknownType, "\"\(type.prefix(40))\" is not a message type; use one of \(Self.typeList).")
        }
    }

    /// The stored game `replay` and `raceGhost` name.
    private func storedGameID(by type: String) throws(ProtocolError) -> String {
        guard let gameId = limited(gameId, .gameId), !gameId.isEmpty else {
            throw ProtocolError(.badMessage, "\(type) needs a \"gameId\": the id of a stored game (a leaderboard row's, or one of yours).",
                                inReplyTo: type)
        }
        return gameId
    }

    /// `replayControl`: pause, play, or seek to a step (which the replay checks is in range).
    private func replayControl() throws(ProtocolError) -> ClientMessage.ReplayControl {
        let type = "replayControl"
        switch try required(action, .action, by: type) {
        case "pause": return .pause
        case "play": return .play
        case "seek":
            guard let step else {
                throw ProtocolError(.badMessage, "A seek needs a \"step\": the step to go to, from 0 to the game's last.", inReplyTo: type)
            }
            return .seek(step: step)
        case let other:
            throw ProtocolError(.badMessage, "\"\(other.prefix(40))\" is not an action; use \"pause\", \"play\" or \"seek\".", inReplyTo: type)
        }
    }

    /// `watch` names a game or a room (with a seat, or the first racer), never both.
    private func watchTarget() throws(ProtocolError) -> ClientMessage.WatchTarget {
        let gameId = limited(gameId, .gameId).flatMap { $0.isEmpty ? nil : $0 }
        let room = limited(room, .room).flatMap { $0.isEmpty ? nil : $0 }
        switch (gameId, room) {
        case (let gameId?, nil):
            return .game(gameId)
        case (nil, let room?):
            if let seat, seat < 0 {
                throw ProtocolError(.badMessage, "\"seat\" is a racer's seat in the room: a whole number from 0.", inReplyTo: "watch")
            }
            return .room(code: room, seat: seat)
        case (.some, .some):
            throw ProtocolError(.badMessage, "watch takes a \"gameId\" or a \"room\", not both.", inReplyTo: "watch")
        case (nil, nil):
            throw ProtocolError(.badMessage,
                "watch needs a \"gameId\" (a running game's id) or a \"room\" (a race room's code, with an optional \"seat\").",
                inReplyTo: "watch")
        }
    }

    private static let typeList = ClientMessage.typeNames.joined(separator: ", ")
    private static let levelList = SpeedLevel.allCases.map(\.rawValue).joined(separator: ", ")
}
