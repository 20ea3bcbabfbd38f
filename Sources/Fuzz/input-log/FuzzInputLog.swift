import RetroRapidFuzz

/// fuzz-input-log: InputLogFuzzTarget (Sources/RetroRapidFuzz/InputLogFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzInputLog {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(InputLogFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(InputLogFuzzTarget.self)
        #endif
    }
}
