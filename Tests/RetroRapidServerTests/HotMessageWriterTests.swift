import RetroRapidLWS
import RetroRapidRules
import Testing
@testable import RetroRapidServer

/// `HotMessageWriter` writes exactly what `ServerMessage.encode(into:)` writes for a step or a
/// `moved`, and
/// `WebSocketSendBuffer` hands out exactly those bytes after the headroom.
@Suite("Hot message writer")
struct HotMessageWriterTests {
    /// The writer's bytes, written into memory as large as the writer asks for, with a guard
    /// byte after it that must stay untouched.
    func written(_ frame: StepFrame, _ lanes: LaneSet, _ haptic: Bool) -> [UInt8] {
        let room = HotMessageWriter.maximumLength
        var memory = [UInt8](repeating: 0xA5, count: room + 1)
        let count = memory.withUnsafeMutableBufferPointer {
            HotMessageWriter.write(.step(frame, safeLanes: lanes, haptic: haptic), to: $0.baseAddress!)!
        }
        #expect(count <= room)
        #expect(memory[room] == 0xA5, "wrote past the room it asks for")
        return Array(memory.prefix(count))
    }

    @Test("every road row pattern, lane, safe-lane set and haptic is written as the encoder writes it")
    func everyShape() {
        for pattern in 0..<8 {
            // Each row a different pattern, so a row written in the wrong place shows.
            let rows = (0..<Road.rowCount).map { LaneSet(rawValue: UInt8((pattern + $0) % 8)) }
            let road = Road(rows: rows)
            for lane in Lane.allCases {
                for lanes in 0..<8 {
                    for haptic in [false, true] {
                        let frame = StepFrame(step: pattern * 100 + lanes, road: road, lane: lane, score: lanes * 7,
                                              stepInterval: 600 - pattern)
                        let message = ServerMessage.step(frame, safeLanes: LaneSet(rawValue: UInt8(lanes)), haptic: haptic)
                        #expect(written(frame, LaneSet(rawValue: UInt8(lanes)), haptic) == message.encoded())
                    }
                }
            }
        }
    }

    @Test("numbers of every width, negative ones and the extremes included")
    func numbers() {
        let values = [0, 1, 9, 10, 99, 100, 12_345, 999_999_999, 1_000_000_000, Int.max, -1, -10, -987, Int.min]
        for value in values {
            let frame = StepFrame(step: value, road: Road(), lane: .left, score: value, stepInterval: value)
            let message = ServerMessage.step(frame, safeLanes: .all, haptic: true)
            #expect(written(frame, .all, true) == message.encoded(), "value \(value)")
        }
        // The widest message there is fits the room exactly or with some to spare.
        let widest = StepFrame(step: Int.min, road: Road(rows: Array(repeating: .all, count: Road.rowCount)),
                               lane: .right, score: Int.min, stepInterval: Int.min)
        #expect(written(widest, .all, true).count <= HotMessageWriter.maximumLength)
    }

    @Test("every moved message is written as the encoder writes it; other messages are not written")
    func moved() {
        for lane in Lane.allCases {
            for safe in [false, true] {
                for haptic in [false, true] {
                    let message = ServerMessage.moved(lane: lane, safe: safe, haptic: haptic)
                    var memory = [UInt8](repeating: 0, count: HotMessageWriter.maximumLength)
                    let count = memory.withUnsafeMutableBufferPointer { HotMessageWriter.write(message, to: $0.baseAddress!) }
                    #expect(count.map { Array(memory.prefix($0)) } == message.encoded())
                    // The expected text, spelt out once, so the table cannot drift with the encoder.
                    if lane == .left && safe && haptic {
                        #expect(message.encoded() == Array(#"{"type":"moved","lane":0,"safe":true,"haptic":"move"}"#.utf8))
                    }
                }
            }
        }
        var memory = [UInt8](repeating: 0, count: HotMessageWriter.maximumLength)
        for other in [ServerMessage.pong, .bump(.left), .stepRevised(step: 3)] {
            #expect(memory.withUnsafeMutableBufferPointer { HotMessageWriter.write(other, to: $0.baseAddress!) } == nil)
        }
    }

    @Test("the send buffer gives the step's bytes after the headroom, and other messages as before")
    func sendBuffer() {
        let buffer = WebSocketSendBuffer()
        let frame = StepFrame(step: 41, road: Road(rows: [.left, [], .right, .all, [], .middle, []]), lane: .right,
                              score: 40, stepInterval: 540)
        let step = ServerMessage.step(frame, safeLanes: [.middle, .right], haptic: true)
        // Steps and other messages in turn: the step memory and the shared array never mix.
        for message in [step, .pong, step, .moved(lane: .left, safe: true, haptic: false), step] {
            let bytes = buffer.withEncoded(message) { Array($0) }
            #expect(bytes.count == LWSConnection.headroom + message.encoded().count)
            #expect(Array(bytes.dropFirst(LWSConnection.headroom)) == message.encoded())
        }
    }
}
