import RetroRapidFuzz

/// fuzz-promo-code: PromoCodeFuzzTarget (Sources/RetroRapidFuzz/PromoCodeFuzzTarget.swift). Built with
/// -DFUZZING (scripts/fuzz.sh, with -sanitize=fuzzer,address) libFuzzer drives it; otherwise
/// it replays the files and folders it is given (docs/FUZZING.md).
@main
enum FuzzPromoCode {
    static func main() {
        #if FUZZING
        FuzzEntry.runLibFuzzer { data, size in FuzzEntry.testOneInput(PromoCodeFuzzTarget.self, data, size) }
        #else
        FuzzEntry.replay(PromoCodeFuzzTarget.self)
        #endif
    }
}
