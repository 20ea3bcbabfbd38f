import Foundation
import RetroRapidServer

/// Bytes of one WebSocket text message into `ClientMessageReader`
/// (Sources/RetroRapidServer/WebSocket/ClientMessageReader.swift), checked against Foundation, whose
/// answers the reader promises to match:
/// - what the reader takes as JSON, Foundation's parser takes too, and of the right shape
///   (an object for a message, anything else for `notAnObject`);
/// - each known field it reads has the value `JSONDecoder` finds for it in the same bytes
///   (`step`, `seats` and `seat` as their Int or, to a Double's precision, their Double
///   reading: see `integerAgrees`);
/// - a known field it marks as of the wrong kind is present, and `JSONDecoder` cannot read it
///   as that field's type either.
public enum ClientMessageFuzzTarget: FuzzTarget {
    public static let name = "client-message"
    public static let outcomes: Set<String> = ["message", "notJSON", "notAnObject", "wrongKind"]

    /// One member of an object, by a name given in the decoder's `userInfo`, as `T`.
    struct Member<T: Decodable>: Decodable {
        static var nameKey: CodingUserInfoKey { CodingUserInfoKey(rawValue: "member")! }
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        var value: T?
        init(from decoder: any Decoder) throws {
            let name = decoder.userInfo[Self.nameKey] as! String
            value = try decoder.container(keyedBy: Key.self).decodeIfPresent(T.self, forKey: Key(stringValue: name))
        }

        /// The member as JSONDecoder reads it; nil when it refuses to.
        static func decode(_ name: String, from data: Data) -> Member? {
            let decoder = JSONDecoder()
            decoder.userInfo[nameKey] = name
            return try? decoder.decode(Member.self, from: data)
        }
    }

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        // The hub's fast path for moves must read what the general reader reads, or nothing.
        if let disagreement = MoveMessageReader.disagreement(on: input) { throw PropertyViolation(disagreement) }
        let data = Data(input)
        let parsed: Any?
        // Foundation refuses numbers beyond a Double's range ("1e400"), which RFC 8259's
        // grammar allows and the reader takes (marking them only where a field needs an Int):
        // for those texts only the reader's own answer is known.
        var outOfFoundationsRange = false
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        } catch {
            parsed = nil
            outOfFoundationsRange = "\((error as NSError).userInfo)".contains("is not representable in Swift")
        }
        let message: RawClientMessage
        do throws(ClientMessageReader.Failure) {
            message = try ClientMessageReader.read(input)
        } catch {
            switch error {
            case .notJSON:
                return "notJSON"
            case .notAnObject:
                if outOfFoundationsRange { return "notAnObject" }
                guard let parsed else { throw PropertyViolation("notAnObject for a text Foundation does not parse") }
                guard !(parsed is [String: Any]) else { throw PropertyViolation("notAnObject for an object") }
                return "notAnObject"
            }
        }
        if outOfFoundationsRange { return message.wrongFields.isEmpty ? "message" : "wrongKind" }
        guard let object = parsed as? [String: Any] else {
            throw PropertyViolation("a message from a text Foundation does not parse as an object")
        }
        var differing: [String] = []
        func compare<T: Decodable & Equatable>(_ name: String, _ field: RawClientMessage.Fields, _ value: T?,
                                               as type: T.Type) throws(PropertyViolation) {
            let decoded = Member<T>.decode(name, from: data)
            if message.wrongFields.contains(field) {
                guard object[name] != nil else { throw PropertyViolation("\(name) marked wrong but Foundation finds no such member") }
                if decoded != nil { differing.append(name) }  // JSONDecoder read it: only a repeat explains that
            } else if decoded.map({ $0.value == value }) != true {
                differing.append(name)
            }
        }
        try compare("type", .type, message.type, as: String.self)
        try compare("token", .token, message.token, as: String.self)
        try compare("client", .client, message.client, as: String.self)
        try compare("level", .level, message.level, as: String.self)
        try compare("practice", .practice, message.practice, as: Bool.self)
        try compare("direction", .direction, message.direction, as: String.self)
        try compare("road", .road, message.road, as: String.self)
        try compare("code", .code, message.code, as: String.self)
        try compare("ready", .ready, message.ready, as: Bool.self)
        try compare("gameId", .gameId, message.gameId, as: String.self)
        try compare("room", .room, message.room, as: String.self)
        try compare("action", .action, message.action, as: String.self)
        let integers: [(String, RawClientMessage.Fields, Int?)] = [("step", .step, message.step), ("seats", .seats, message.seats),
                                                                  ("seat", .seat, message.seat)]
        for (name, field, value) in integers where !integerAgrees(name, field, value, message, data) {
            differing.append(name)
        }
        // A repeated name is the one place they may differ: RFC 8259 leaves its meaning open,
        // the reader keeps the last value, JSONDecoder on Linux the first.
        guard differing.allSatisfy({ memberNameCount($0, in: input) > 1 }) else {
            throw PropertyViolation("the reader read \(message), JSONDecoder differs on \(differing)")
        }
        return message.wrongFields.isEmpty ? "message" : "wrongKind"
    }

    /// The fields `check` compares with JSONDecoder's reading, by their wire names: every
    /// field the reader knows (FuzzCorpusTests holds this to `RawClientMessage.fieldNames`).
    public static let comparedFields = ["type", "token", "client", "level", "practice", "direction", "road", "code",
                                        "ready", "gameId", "room", "action", "step", "seats", "seat"]

    /// The reader's fields the checks above leave out; empty while they cover all.
    public static var uncomparedFields: [String] {
        RawClientMessage.fieldNames.filter { !comparedFields.contains($0) }
    }

    /// Every message type the server reads (`ClientMessage.typeNames`), for the corpus tests.
    public static var messageTypes: [String] { RawClientMessage.typeNames }

    /// An integer field (`step`, `seats`, `seat`: one reading, `JSONObjectReader.integer`) as
    /// JSONDecoder reads it, as an Int and as a Double. Neither alone is exact: as an Int it
    /// takes 1.00000000000000000001 as 1 and refuses 9223372036854775807.0, as a Double it
    /// refuses 0e1 and rounds beyond 2^53. The reader decides on the digits, so a value it
    /// reads must equal the Int reading or, to a Double's precision, the Double reading. A
    /// value it marks wrong must have no Int reading, unless the text has a '.', 'e' or 'E'
    /// anywhere (a coarse stand-in for "the number has a fraction or an exponent", where
    /// JSONDecoder's Int reading rounds; the reader's exact judgement there is held by
    /// ClientMessageReaderTests instead).
    static func integerAgrees(_ name: String, _ field: RawClientMessage.Fields, _ value: Int?,
                              _ message: RawClientMessage, _ data: Data) -> Bool {
        let asInt = Member<Int>.decode(name, from: data)
        guard message.wrongFields.contains(field) else {
            let asDouble = Member<Double>.decode(name, from: data)
            return asInt.map { $0.value == value } == true
                || asDouble.map { $0.value == value.map(Double.init) } == true
        }
        guard let asInt, asInt.value != nil else { return true }
        return data.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// How often `name` is a member name anywhere in the text (any depth), found by scanning
    /// for string tokens followed by a colon and decoding them with Foundation: a count that
    /// does not rely on the reader it checks.
    static func memberNameCount(_ name: String, in input: [UInt8]) -> Int {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var count = 0
        var start = 0
        while start < input.count {
            guard input[start] == quote else { start += 1; continue }
            var end = start + 1
            while end < input.count, input[end] != quote { end += input[end] == backslash ? 2 : 1 }
            guard end < input.count else { break }
            var next = end + 1
            while next < input.count, [0x20, 0x09, 0x0A, 0x0D].contains(input[next]) { next += 1 }
            if next < input.count, input[next] == UInt8(ascii: ":"),
               let text = try? JSONSerialization.jsonObject(with: Data(input[start...end]), options: .fragmentsAllowed) as? String,
               text == name {
                count += 1
            }
            start = end + 1
        }
        return count
    }
}
