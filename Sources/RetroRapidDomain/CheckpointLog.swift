import Foundation
import RetroRapidRules

/// One running game's log joined from its `game_checkpoints` rows, fed in id order: a row
/// with `movesBefore` 0 starts the log again (a full checkpoint); any other must follow on
/// from the moves before it. A row that does not (or cannot be read) ends the log there, with
/// the reason in ``problem``, and every later row of the game is ignored, so the game is
/// recovered to its last consistent checkpoint. The same joining for every backend.
package struct CheckpointLog: Sendable {
    package private(set) var steps = 0
    package private(set) var moves: [InputLog.Entry] = []
    package private(set) var durationMilliseconds = 0
    /// The last joined row's time as stored; nil before the first.
    package private(set) var at: String?
    package private(set) var problem: String?

    package init() {}

    /// Joins one row: its step count, the moves before it, its moves as ``encode(_:)`` wrote
    /// them, its play time and its time.
    package mutating func append(steps: Int, movesBefore: Int, moves encoded: String, durationMilliseconds: Int, at: String) {
        guard problem == nil else { return }
        if movesBefore == 0 {
            moves = []
        } else if movesBefore != moves.count {
            problem = "its checkpoints break off: one follows \(movesBefore) moves where \(moves.count) came before"
            return
        }
        do {
            moves += try InputLog(encoded: "\(steps):" + encoded).moves
        } catch {
            problem = "\(error)"
            return
        }
        self.steps = steps
        self.durationMilliseconds = durationMilliseconds
        self.at = at
    }

    /// `record` (as read from `running_games`) with this log, its play time and the time of
    /// its last checkpoint (the start before the first).
    package func applied(to record: RunningGameRecord) -> RunningGameRecord {
        var record = record
        record.inputLog = InputLog(steps: steps, moves: moves).encoded
        record.durationMilliseconds = durationMilliseconds
        record.checkpointedAt = at.flatMap(UTCCivilTime.parse) ?? record.startedAt
        return record
    }

    /// The moves as `InputLog.encoded` writes them after its colon: what a checkpoint row stores.
    package static func encode(_ moves: [InputLog.Entry]) -> String {
        // Written as bytes, not by interpolating each move and joining: every checkpoint row
        // is encoded this way, thousands a second (docs/BENCHMARKS.md, "Checkpoints in slices").
        guard !moves.isEmpty else { return "" }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(moves.count * 6)
        encode(moves, appendingTo: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``encode(_:)``'s UTF-8 bytes, appended to `bytes`: how the SQLite store writes a
    /// batch's texts into one buffer it binds in place.
    package static func encode(_ moves: [InputLog.Entry], appendingTo bytes: inout [UInt8]) {
        for (index, move) in moves.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendDecimal(move.afterStep, to: &bytes)
            bytes.append(move.direction == .left ? UInt8(ascii: "L") : UInt8(ascii: "R"))
        }
    }

    /// `value` in decimal, as `String(value)` writes it.
    package static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
            divisor /= 10
        } while divisor > 0
    }
}
