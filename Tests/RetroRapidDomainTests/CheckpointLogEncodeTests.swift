import RetroRapidDomain
import RetroRapidRules
import Testing

/// `CheckpointLog.encode` writes a checkpoint row's moves byte for byte as `InputLog.encoded`
/// writes them after its colon (the reader and `verify` rely on that one format).
@Suite struct CheckpointLogEncodeTests {
    func expected(_ moves: [InputLog.Entry]) -> String {
        let whole = InputLog(steps: 0, moves: moves).encoded
        return String(whole[whole.index(after: whole.firstIndex(of: ":")!)...])
    }

    @Test func everyNumberWidthAndBothDirections() {
        let steps = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1_000, 65_535, 123_456_789, Int.max, -1, -10, Int.min]
        for (index, step) in steps.enumerated() {
            let one = [InputLog.Entry(afterStep: step, direction: index % 2 == 0 ? .left : .right)]
            #expect(CheckpointLog.encode(one) == expected(one))
        }
        let all = steps.enumerated().map { InputLog.Entry(afterStep: $1, direction: $0 % 3 == 0 ? .right : .left) }
        #expect(CheckpointLog.encode(all) == expected(all))
        #expect(CheckpointLog.encode([]) == "")
    }

    @Test func aLongGamesWholeLog() {
        var generator = SystemRandomNumberGenerator()
        var step = 0
        let moves = (0..<2_000).map { _ -> InputLog.Entry in
            step += Int.random(in: 0...40, using: &generator)
            return InputLog.Entry(afterStep: step, direction: Bool.random(using: &generator) ? .left : .right)
        }
        #expect(CheckpointLog.encode(moves) == expected(moves))
    }
}
