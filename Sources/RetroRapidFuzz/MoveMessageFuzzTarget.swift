import RetroRapidRules
import RetroRapidServer

/// A `move` with any step text into `MoveMessageReader`
/// (Sources/RetroRapidServer/WebSocket/MoveMessageReader.swift), the hub's fast path for the
/// message it reads most. The client-message target feeds it whole messages, where the
/// mutator seldom writes a long digit run inside the one prefix it knows; this target writes
/// the prefix itself and spends the input on the step:
///
///     flags: 1 byte (bit 0: right, else left; bit 1: a digit run, else the bytes as they are)
///     a digit run: length 2 bytes (big-endian, at most 5,000), then digits cycled from the rest
///     the message: {"type":"move","direction":"left","step":<text>}
///
/// Properties:
/// - the fast reader takes exactly the plain decimal numbers of 1 to 15 digits (no leading
///   zero but "0" itself), with their value, and nothing else;
/// - whatever it takes, the general reader reads the same way (`MoveMessageReader.disagreement`);
/// - neither traps, however many digits.
public enum MoveMessageFuzzTarget: FuzzTarget {
    public static let name = "move-message"
    public static let outcomes: Set<String> = ["fast", "generalMove", "refused"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        guard let flags = input.first else { return "refused" }
        let direction = flags & 1 == 1 ? "right" : "left"
        var step: [UInt8]
        if flags & 2 == 2, input.count >= 3 {
            let length = min(Int(input[1]) << 8 | Int(input[2]), 5_000)
            let source = input.dropFirst(3)
            step = source.isEmpty ? Array(repeating: UInt8(ascii: "9"), count: length)
                : (0..<length).map { UInt8(ascii: "0") + source[source.startIndex + $0 % source.count] % 10 }
        } else {
            step = Array(input.dropFirst())
        }
        let text = Array(#"{"type":"move","direction":""#.utf8) + Array(direction.utf8) + Array(#"","step":"#.utf8) + step + [UInt8(ascii: "}")]

        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let plainNumber = (1...15).contains(step.count) && step.allSatisfy(isDigit) && (step.count == 1 || step[0] != UInt8(ascii: "0"))
        let fast = MoveMessageReader.fastReading(of: text)
        if plainNumber {
            let value = step.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }  // at most 15 digits: fits
            guard let fast, fast.step == value, fast.direction.rawValue == direction else {
                throw PropertyViolation("the fast reader read \(String(describing: fast)) for step \(value) \(direction)")
            }
        } else if fast != nil {
            throw PropertyViolation("the fast reader took a step that is no plain number of 1 to 15 digits: \(String(decoding: step, as: UTF8.self))")
        }
        if let disagreement = MoveMessageReader.disagreement(on: text) { throw PropertyViolation(disagreement) }
        if fast != nil { return "fast" }
        if MoveMessageReader.generalReadsAMove(text) { return "generalMove" }
        return "refused"
    }
}
