import RetroRapidServer

/// A game connection's fragments into `WebSocketIncomingMessage`
/// (Sources/RetroRapidServer/WebSocket/WebSocketIncomingMessage.swift), with the length each
/// frame still announces taken straight from the input: any 64-bit value, as a peer's frame
/// header may carry. The input is a limit and then fragments:
///
///     limit: 2 bytes (big-endian, 1 + value % 8192)
///     each:  flags (bit 0: final), announced: 8 bytes (little-endian), count: 1 byte, count bytes
///
/// Properties, against a model that adds the sizes in 128 bits (where nothing overflows):
/// - each fragment gets what the model says: `.tooLarge` exactly when what came, this
///   fragment and what the frame still announces pass the limit; `.message` exactly when the
///   fragment is final and nothing more is announced, holding every byte since the last end;
/// - it never traps, whatever the numbers.
public enum FragmentAssemblyFuzzTarget: FuzzTarget {
    public static let name = "fragment-assembly"
    public static let outcomes: Set<String> = ["incomplete", "message", "tooLarge"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        guard input.count >= 2 else { return "incomplete" }
        let limit = 1 + (Int(input[0]) << 8 | Int(input[1])) % 8192
        var message = WebSocketIncomingMessage(limit: limit)
        var held: [UInt8] = []  // the model: what the assembly should be holding
        var position = 2
        var last = "incomplete"
        while position + 10 <= input.count {
            let isFinal = input[position] & 1 == 1
            var announced: UInt64 = 0
            for offset in 0..<8 { announced |= UInt64(input[position + 1 + offset]) << (8 * offset) }
            let count = min(Int(input[position + 9]), input.count - position - 10)
            let fragment = Array(input[(position + 10)..<(position + 10 + count)])
            position += 10 + count

            let result = fragment.withUnsafeBytes { message.append($0, isFinal: isFinal, remaining: UInt(announced)) }
            let expected: WebSocketIncomingMessage.Result
            if UInt128(held.count) + UInt128(fragment.count) + UInt128(announced) > UInt128(limit) {
                expected = .tooLarge
                held = []
            } else {
                held += fragment
                if isFinal && announced == 0 {
                    expected = .message(held)
                    held = []
                } else {
                    expected = .incomplete
                }
            }
            guard result == expected else {
                throw PropertyViolation("limit \(limit), \(fragment.count) bytes, final \(isFinal), announced \(announced): "
                                        + "got \(result), the model says \(expected)")
            }
            switch result {
            case .incomplete: last = "incomplete"
            case .message: last = "message"
            case .tooLarge: last = "tooLarge"
            }
        }
        return last
    }
}
