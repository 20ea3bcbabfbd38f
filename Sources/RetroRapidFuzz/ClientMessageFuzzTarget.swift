import Foundation
import RetroRapidServer

/// Bytes of one WebSocket text message into `ClientMessageReader`
/// (Sources/RetroRapidServer/ClientMessageReader.swift), checked against Foundation, whose
/// answers the reader promises to match:
/// - what the reader takes as JSON, Foundation's parser takes too, and of the right shape
///   (an object for a message or a wrong-typed field, anything else for `notAnObject`);
/// - a message it reads has the same known fields `JSONDecoder` finds in the same bytes
///   (`step` as its Int or, to a Double's precision, its Double reading: see `StepAsInt`).
public enum ClientMessageFuzzTarget: FuzzTarget {
    public static let name = "client-message"
    public static let outcomes: Set<String> = ["message", "notJSON", "notAnObject", "wrongType"]

    /// The known fields but `step` as `JSONDecoder` reads them.
    struct Fields: Decodable, Equatable {
        var type: String?
        var token: String?
        var client: String?
        var level: String?
        var practice: Bool?
        var direction: String?
    }

    /// `step` as JSONDecoder reads it, as an Int and as a Double. Neither alone is exact:
    /// as an Int it takes 1.00000000000000000001 as 1 and refuses 9223372036854775807.0, as
    /// a Double it refuses 0e1. The reader decides on the digits, so its step must equal the
    /// Int reading or, to a Double's precision, the Double reading.
    struct StepAsInt: Decodable { var step: Int? }
    struct StepAsDouble: Decodable { var step: Double? }

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let data = Data(input)
        let parsed: Any?
        // Foundation refuses numbers beyond a Double's range ("1e400"), which RFC 8259's
        // grammar allows and the reader takes (refusing them only where a field needs an Int):
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
            case .wrongType(let field):
                if outOfFoundationsRange { return "wrongType" }
                guard let object = parsed as? [String: Any] else {
                    throw PropertyViolation("wrongType(\(field)) for a text Foundation does not parse as an object")
                }
                guard object[field] != nil else { throw PropertyViolation("wrongType(\(field)) for a field Foundation does not find") }
                return "wrongType"
            }
        }
        if outOfFoundationsRange { return "message" }
        guard parsed is [String: Any] else { throw PropertyViolation("a message from a text Foundation does not parse as an object") }
        let decoded: Fields
        do {
            decoded = try JSONDecoder().decode(Fields.self, from: data)
        } catch {
            throw PropertyViolation("a message JSONDecoder refuses (\(error))")
        }
        let read = Fields(type: message.type, token: message.token, client: message.client, level: message.level,
                          practice: message.practice, direction: message.direction)
        var differing = read.differences(from: decoded)
        let asInt = try? JSONDecoder().decode(StepAsInt.self, from: data)
        let asDouble = try? JSONDecoder().decode(StepAsDouble.self, from: data)
        if asInt.map({ $0.step == message.step }) != true, asDouble.map({ $0.step == message.step.map(Double.init) }) != true {
            differing.append("step")
        }
        // A repeated name is the one place they may differ: RFC 8259 leaves its meaning open,
        // the reader keeps the last value, JSONDecoder on Linux the first.
        guard differing.allSatisfy({ memberNameCount($0, in: input) > 1 }) else {
            throw PropertyViolation("the reader read \(read) and step \(String(describing: message.step)), JSONDecoder \(decoded), "
                + "step \(String(describing: asInt?.step)) as an Int, \(String(describing: asDouble?.step)) as a Double")
        }
        return "message"
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

extension ClientMessageFuzzTarget.Fields {
    /// The JSON names of the fields that differ.
    func differences(from other: Self) -> [String] {
        var names: [String] = []
        if type != other.type { names.append("type") }
        if token != other.token { names.append("token") }
        if client != other.client { names.append("client") }
        if level != other.level { names.append("level") }
        if practice != other.practice { names.append("practice") }
        if direction != other.direction { names.append("direction") }
        return names
    }
}
