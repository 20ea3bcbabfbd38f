import RetroRapidRules

/// Text (as UTF-8 bytes, invalid sequences repaired) into `InputLog(encoded:)`
/// (Sources/RetroRapidRules/InputLog.swift), which reads the input log stored with every game
/// back for replays and `retrorapid verify`. Properties:
/// - what it accepts re-encodes to exactly the same text: it refuses anything `encoded`
///   could not have written (its own promise), so one log has one stored form;
/// - an accepted log's moves are in step order and none comes after the last step.
public enum InputLogFuzzTarget: FuzzTarget {
    public static let name = "input-log"
    public static let outcomes: Set<String> = ["accepted", "malformed", "outOfOrder", "beyondLastStep"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let text = String(decoding: input, as: UTF8.self)
        let log: InputLog
        do throws(InputLog.DecodingError) {
            log = try InputLog(encoded: text)
        } catch {
            switch error {
            case .malformed: return "malformed"
            case .outOfOrder: return "outOfOrder"
            case .beyondLastStep: return "beyondLastStep"
            }
        }
        guard log.encoded == text else { throw PropertyViolation("'\(text)' decodes but re-encodes as '\(log.encoded)'") }
        var previous = 0
        for (index, move) in log.moves.enumerated() {
            guard move.afterStep >= previous, move.afterStep <= log.steps else {
                throw PropertyViolation("move \(index) after step \(move.afterStep) is out of order or after step \(log.steps)")
            }
            previous = move.afterStep
        }
        return "accepted"
    }
}
