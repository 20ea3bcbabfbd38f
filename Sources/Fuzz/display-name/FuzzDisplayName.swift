import RetroRapidFuzz

/// fuzz-display-name: DisplayNameFuzzTarget (Sources/RetroRapidFuzz/DisplayNameFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzDisplayName {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(DisplayNameFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(DisplayNameFuzzTarget.self)
        #endif
    }
}
