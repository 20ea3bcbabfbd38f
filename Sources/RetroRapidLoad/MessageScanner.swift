/// Reads the few fields the load generator needs straight from a server message's bytes.
///
/// The load generator shares a 2-core machine with the server it measures, so it must not spend
/// its core decoding JSON: every server message is one flat-enough object whose fields we
/// know (docs/PROTOCOL.md), and a key such as `"step":` appears once per message. This finds a
/// key and reads the value after it; it is not a JSON parser and is never used on anything but
/// our own server's (or the C reference broadcaster's) messages.
public struct MessageScanner {
    public let bytes: UnsafeRawBufferPointer

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The message's `type`, as one of the kinds the load generator acts on.
    public var kind: ServerMessageKind {
        guard let start = valueStart(of: Self.typeKey), start < bytes.count, bytes[start] == UInt8(ascii: "\"") else {
            return .other
        }
        var end = start + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return ServerMessageKind(name: UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<end]))
    }

    /// The integer after `"key":`, or nil when the key is missing or holds something else.
    public func integer(_ key: StaticString) -> Int? {
        guard var index = valueStart(of: key) else { return nil }
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var value = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            // The server's digits: a number no `Int` holds is no answer, not a trap.
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.addingReportingOverflow(Int(bytes[index] - UInt8(ascii: "0")))
            if overflowA || overflowB { return nil }
            value = next
            index += 1
            digits += 1
        }
        return digits == 0 ? nil : (negative ? -value : value)
    }

    /// The lanes listed after `"key":[`, as a bit set (lane 0 is bit 0), or nil when missing.
    public func laneSet(_ key: StaticString) -> UInt8? {
        guard var index = valueStart(of: key), index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return nil }
        var lanes: UInt8 = 0
        index += 1
        while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
            let byte = bytes[index]
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "2") { lanes |= 1 << (byte - UInt8(ascii: "0")) }
            index += 1
        }
        return lanes
    }

    /// Whether `"key":` holds an object (rather than `null` or nothing).
    public func hasObject(_ key: StaticString) -> Bool {
        guard let start = valueStart(of: key), start < bytes.count else { return false }
        return bytes[start] == UInt8(ascii: "{")
    }

    /// The text after `"key":"`, up to the closing quote (no escapes are expected in the values read).
    public func string(_ key: StaticString) -> String? {
        guard let start = valueStart(of: key), start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var end = start + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<end]), as: UTF8.self)
    }

    /// How many times `text` occurs in the message, byte for byte (e.g. `"ready":true` in a
    /// `room` message: one per racer who is ready).
    public func occurrences(of text: StaticString) -> Int {
        let length = text.utf8CodeUnitCount
        guard length > 0, bytes.count >= length else { return 0 }
        var found = 0
        var index = 0
        while index + length <= bytes.count {
            if memcmpEqual(bytes.baseAddress! + index, text.utf8Start, length) {
                found += 1
                index += length
            } else {
                index += 1
            }
        }
        return found
    }

    private static let typeKey: StaticString = "type"

    /// Index of the first byte after `"key":` (and any spaces), or nil.
    private func valueStart(of key: StaticString) -> Int? {
        let keyLength = key.utf8CodeUnitCount
        let needed = keyLength + 3  // the two quotes and the colon
        guard bytes.count >= needed else { return nil }
        let keyBytes = UnsafeRawBufferPointer(start: key.utf8Start, count: keyLength)
        var index = 0
        while index + needed <= bytes.count {
            if bytes[index] == UInt8(ascii: "\""), bytes[index + keyLength + 1] == UInt8(ascii: "\""),
               bytes[index + keyLength + 2] == UInt8(ascii: ":"),
               memcmpEqual(bytes.baseAddress! + index + 1, keyBytes.baseAddress!, keyLength) {
                var value = index + needed
                while value < bytes.count, bytes[value] == UInt8(ascii: " ") { value += 1 }
                return value
            }
            index += 1
        }
        return nil
    }

    private func memcmpEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        for offset in 0..<count where a.load(fromByteOffset: offset, as: UInt8.self) != b.load(fromByteOffset: offset, as: UInt8.self) {
            return false
        }
        return true
    }
}

/// The server messages the load generator tells apart (docs/PROTOCOL.md, "Server → client").
public enum ServerMessageKind: Equatable, Sendable {
    case welcome, started, snapshot, step, moved, bump, stepRevised, crash, gameOver, error, pong
    // Rooms and races, and watching (docs/PROTOCOL.md).
    case room, roomLeft, countdown, standings, raceOver, watching, watchEnded
    case other

    init(name: UnsafeRawBufferPointer) {
        switch String(decoding: name, as: UTF8.self) {
        case "welcome": self = .welcome
        case "started": self = .started
        case "snapshot": self = .snapshot
        case "step": self = .step
        case "moved": self = .moved
        case "bump": self = .bump
        case "stepRevised": self = .stepRevised
        case "crash": self = .crash
        case "gameOver": self = .gameOver
        case "error": self = .error
        case "pong": self = .pong
        case "room": self = .room
        case "roomLeft": self = .roomLeft
        case "countdown": self = .countdown
        case "standings": self = .standings
        case "raceOver": self = .raceOver
        case "watching": self = .watching
        case "watchEnded": self = .watchEnded
        default: self = .other
        }
    }
}
