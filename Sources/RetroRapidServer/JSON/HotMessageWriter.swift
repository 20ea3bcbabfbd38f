import RetroRapidRules

/// Writes the two messages a game sends most, `step` and `moved` (docs/PROTOCOL.md), straight
/// into raw memory: the bytes `ServerMessage.encode(into:)` writes for them, byte for byte,
/// without `JSONWriter`'s growing array.
///
/// Why a writer of their own: every running game sends one step per interval, 33,000 a second
/// at 19,900 games, and through `JSONWriter` each cost about 7,000 instructions (an append per
/// token, each checking the array's uniqueness and capacity), a fifth of the server's work per
/// frame (docs/BENCHMARKS.md, "Cost per frame"); a move's answer cost about 2,000. A step's
/// shape is fixed and its size bounded, so it is written by pointer into memory known to be
/// large enough; `moved` has twelve possible texts, made once.
enum HotMessageWriter {
    /// The longest message written here: a step with every number at its widest (`Int.min` is
    /// 20 bytes), every lane safe, the haptic field present. The caller gives this much room.
    static let maximumLength = fixedLength + 3 * 20 + 2 * 20

    /// Writes `message` at `start` (at least `maximumLength` bytes) and returns its length, or
    /// nil when it is not a message written here (the caller encodes it with `JSONWriter`).
    static func write(_ message: ServerMessage, to start: UnsafeMutablePointer<UInt8>) -> Int? {
        switch message {
        case .step(let frame, let safeLanes, let haptic):
            return writeStep(frame, safeLanes: safeLanes, haptic: haptic, to: start)
        case .moved(let lane, let safe, let haptic):
            let text = movedTexts[lane.rawValue * 4 + (safe ? 2 : 0) + (haptic ? 1 : 0)]
            text.withUnsafeBufferPointer { start.update(from: $0.baseAddress!, count: $0.count) }
            return text.count
        default:
            return nil
        }
    }

    /// `moved` for each lane, safe or not, with or without its haptic, by
    /// lane × 4 + safe × 2 + haptic: made by the encoder itself, so they cannot differ.
    private static let movedTexts: [[UInt8]] = Lane.allCases.flatMap { lane in
        [false, true].flatMap { safe in
            [false, true].map { haptic in ServerMessage.moved(lane: lane, safe: safe, haptic: haptic).encoded() }
        }
    }

    /// A step message; its length.
    static func writeStep(_ frame: StepFrame, safeLanes: LaneSet, haptic: Bool,
                          to start: UnsafeMutablePointer<UInt8>) -> Int {
        var p = start
        p = copy(prefix, to: p)
        p = writeInt(frame.step, to: p)
        p = copy(gridKey, to: p)
        for index in 0..<Road.rowCount {
            if index > 0 { p.pointee = UInt8(ascii: ","); p += 1 }
            let row = frame.road.row(index).rawValue
            // "[a,b,c]": lanes left, middle, right as bits 0, 1, 2.
            p[0] = UInt8(ascii: "[")
            p[1] = UInt8(ascii: "0") + (row & 1)
            p[2] = UInt8(ascii: ",")
            p[3] = UInt8(ascii: "0") + (row >> 1 & 1)
            p[4] = UInt8(ascii: ",")
            p[5] = UInt8(ascii: "0") + (row >> 2 & 1)
            p[6] = UInt8(ascii: "]")
            p += 7
        }
        p = copy(laneKey, to: p)
        p = writeInt(frame.lane.rawValue, to: p)
        p = copy(scoreKey, to: p)
        p = writeInt(frame.score, to: p)
        p = copy(intervalKey, to: p)
        p = writeInt(frame.stepInterval, to: p)
        p = copy(safeLanesKey, to: p)
        var first = true
        for lane in Lane.allCases where safeLanes.contains(lane) {
            if !first { p.pointee = UInt8(ascii: ","); p += 1 }
            first = false
            p = writeInt(lane.rawValue, to: p)
        }
        p.pointee = UInt8(ascii: "]"); p += 1
        if haptic { p = copy(hapticMember, to: p) }
        p.pointee = UInt8(ascii: "}"); p += 1
        return p - start
    }

    // The fixed parts, in the order `ServerMessage.encode(into:)` writes them.
    private static let prefix: StaticString = #"{"type":"step","step":"#
    private static let gridKey: StaticString = #","grid":["#
    private static let laneKey: StaticString = #"],"lane":"#
    private static let scoreKey: StaticString = #","score":"#
    private static let intervalKey: StaticString = #","interval":"#
    private static let safeLanesKey: StaticString = #","safeLanes":["#
    private static let hapticMember: StaticString = #","haptic":"step""#

    /// Everything but the numbers and the safe lanes' commas: the grid's 7 rows of 7 bytes and
    /// their 6 commas, the keys, the closing brackets.
    private static let fixedLength = prefix.utf8CodeUnitCount + gridKey.utf8CodeUnitCount
        + Road.rowCount * 7 + (Road.rowCount - 1) + laneKey.utf8CodeUnitCount + scoreKey.utf8CodeUnitCount
        + intervalKey.utf8CodeUnitCount + safeLanesKey.utf8CodeUnitCount + 1 + hapticMember.utf8CodeUnitCount + 1

    private static func copy(_ text: StaticString, to p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let count = text.utf8CodeUnitCount
        p.update(from: text.utf8Start, count: count)
        return p + count
    }

    /// The decimal digits of `value`, as `JSONWriter.int` writes them.
    private static func writeInt(_ value: Int, to start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var p = start
        if value < 0 { p.pointee = UInt8(ascii: "-"); p += 1 }
        var magnitude = value.magnitude
        // Count the digits first, then fill them in from the last.
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 { digits += 1; rest /= 10 }
        var index = digits
        repeat {
            index -= 1
            p[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while index > 0
        return p + digits
    }
}
