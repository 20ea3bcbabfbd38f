import RetroRapidFuzz

/// fuzz-http-query: HTTPQueryFuzzTarget (Sources/RetroRapidFuzz/HTTPQueryFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzHTTPQuery {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(HTTPQueryFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(HTTPQueryFuzzTarget.self)
        #endif
    }
}
