import RetroRapidFuzz

/// fuzz-client-message: ClientMessageFuzzTarget (Sources/RetroRapidFuzz/ClientMessageFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzClientMessage {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(ClientMessageFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(ClientMessageFuzzTarget.self)
        #endif
    }
}
