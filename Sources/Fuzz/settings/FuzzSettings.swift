import RetroRapidFuzz

/// fuzz-settings: SettingsFuzzTarget (Sources/RetroRapidFuzz/SettingsFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzSettings {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(SettingsFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(SettingsFuzzTarget.self)
        #endif
    }
}
