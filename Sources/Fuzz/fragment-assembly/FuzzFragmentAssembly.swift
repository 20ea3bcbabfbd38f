import RetroRapidFuzz

/// fuzz-fragment-assembly: FragmentAssemblyFuzzTarget (Sources/RetroRapidFuzz/FragmentAssemblyFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzFragmentAssembly {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(FragmentAssemblyFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(FragmentAssemblyFuzzTarget.self)
        #endif
    }
}
