import RetroRapidRules

/// Reads a `move` written the way the browser's socket and the load generator write it,
/// `{"type":"move","direction":"left","step":12}`, without the general reader: nil for any
/// other text, which then goes through `ClientMessage.read` and `RawClientMessage.message()`
/// as before, so what is accepted or refused, and with which error, does not change.
///
/// Why: moves are nearly every message a server reads, and the general reader (every field
/// looked up by name, kinds checked, strings made) cost about 3,500 instructions a move, a
/// fifth of answering it (docs/BENCHMARKS.md, "Cost per frame").
package enum MoveMessageReader {
    private static let prefix = Array(#"{"type":"move","direction":""#.utf8)
    private static let left = Array(#"left","step":"#.utf8)
    private static let right = Array(#"right","step":"#.utf8)
    /// More digits than this go the general way (the number may not fit an `Int`).
    private static let maximumDigits = 15

    static func read(_ bytes: [UInt8]) -> ClientMessage? {
        bytes.withUnsafeBufferPointer { text -> ClientMessage? in
            guard text.starts(with: prefix) else { return nil }
            var index = prefix.count
            let direction: Direction
            if text[index...].starts(with: left) {
                direction = .left
                index += left.count
            } else if text[index...].starts(with: right) {
                direction = .right
                index += right.count
            } else {
                return nil
            }
            // A JSON number without sign, fraction or exponent; a leading zero only alone. The
            // digit count is checked before each multiplication: a client may send any number
            // of digits, and 16 or more could overflow `Int` and trap.
            let digitsStart = index
            var step = 0
            while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") {
                guard index - digitsStart < maximumDigits else { return nil }
                step = step * 10 + Int(text[index] - UInt8(ascii: "0"))
                index += 1
            }
            let digits = index - digitsStart
            guard digits > 0, digits == 1 || text[digitsStart] != UInt8(ascii: "0") else { return nil }
            guard index == text.count - 1, text[index] == UInt8(ascii: "}") else { return nil }
            return .move(direction: direction, seenStep: step)
        }
    }

    /// What `read` makes of `bytes`, as plain values: for the move-message fuzz target, which
    /// sees only the package's API.
    package static func fastReading(of bytes: [UInt8]) -> (direction: Direction, step: Int)? {
        guard case .move(let direction, let step)? = read(bytes) else { return nil }
        return (direction, step)
    }

    /// Whether the general reader takes `bytes` as a move (of any step).
    package static func generalReadsAMove(_ bytes: [UInt8]) -> Bool {
        if case .move? = try? ClientMessage.decode(bytes) { return true }
        return false
    }

    /// What is wrong when `read` takes `bytes` and the general reader reads them otherwise (or
    /// refuses them); nil when they agree. For the client-message fuzz target.
    package static func disagreement(on bytes: [UInt8]) -> String? {
        guard let fast = read(bytes) else { return nil }
        let general = Result { () throws(ProtocolError) in try ClientMessage.decode(bytes) }
        if case .success(fast) = general { return nil }
        return "MoveMessageReader read \(fast), the general reader \(general)"
    }
}
