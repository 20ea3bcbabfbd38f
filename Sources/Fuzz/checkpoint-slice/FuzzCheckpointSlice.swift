import RetroRapidFuzz

/// fuzz-checkpoint-slice: CheckpointSliceFuzzTarget (Sources/RetroRapidFuzz/CheckpointSliceFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzCheckpointSlice {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(CheckpointSliceFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(CheckpointSliceFuzzTarget.self)
        #endif
    }
}
