import RetroRapidDomain
import RetroRapidRules

/// Text (as UTF-8 bytes, invalid sequences repaired) into `CheckpointSlice.decode`
/// (Sources/RetroRapidDomain/CheckpointSlice.swift), which reads a cluster node's checkpoint
/// slices back from PostgreSQL once the node's process is gone: bytes from the database,
/// checked as hostile. Properties:
/// - nothing traps, whatever the lengths and numbers say;
/// - every entry of an accepted text has an id, no negative number and moves without a line
///   break;
/// - the entries whose moves are an input log's, written again by `encode`, read back as the
///   same entries.
public enum CheckpointSliceFuzzTarget: FuzzTarget {
    public static let name = "checkpoint-slice"
    public static let outcomes: Set<String> = ["accepted", "refused"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let entries: [CheckpointSlice.Entry]
        do {
            entries = try CheckpointSlice.decode(String(decoding: input, as: UTF8.self))
        } catch {
            return "refused"
        }
        for (index, entry) in entries.enumerated() {
            guard !entry.publicID.isEmpty, entry.steps >= 0, entry.movesBefore >= 0, entry.durationMilliseconds >= 0,
                  !entry.moves.utf8.contains(UInt8(ascii: "\n")) else {
                throw PropertyViolation("entry \(index) was accepted as \(entry)")
            }
        }
        let checkpoints = entries.compactMap { entry -> GameCheckpoint? in
            guard let log = try? InputLog(encoded: "\(entry.steps):" + entry.moves) else { return nil }
            return GameCheckpoint(publicID: entry.publicID, steps: entry.steps, movesBefore: entry.movesBefore, moves: log.moves,
                                  durationMilliseconds: entry.durationMilliseconds)
        }
        var bytes: [UInt8] = []
        CheckpointSlice.encode(checkpoints, appendingTo: &bytes)
        let expected = checkpoints.map {
            CheckpointSlice.Entry(publicID: $0.publicID, steps: $0.steps, movesBefore: $0.movesBefore,
                                  moves: CheckpointLog.encode($0.moves), durationMilliseconds: $0.durationMilliseconds)
        }
        guard let again = try? CheckpointSlice.decode(String(decoding: bytes, as: UTF8.self)), again == expected else {
            throw PropertyViolation("\(checkpoints.count) entries written again do not read back as themselves")
        }
        return "accepted"
    }
}
