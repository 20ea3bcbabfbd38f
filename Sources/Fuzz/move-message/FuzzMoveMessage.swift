import RetroRapidFuzz

/// fuzz-move-message: MoveMessageFuzzTarget (Sources/RetroRapidFuzz/MoveMessageFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzMoveMessage {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(MoveMessageFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(MoveMessageFuzzTarget.self)
        #endif
    }
}
