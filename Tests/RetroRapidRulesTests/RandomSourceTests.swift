import Testing
@testable import RetroRapidRules

/// The numbers below come from the authors' reference C code for SplitMix64 and
/// xoshiro256** (compiled and run once); matching them means the road is the same on
/// every machine and release.
struct RandomSourceTests {
    @Test func splitMix64MatchesTheReferenceSequence() {
        var random = SplitMix64(seed: 1_234_567)
        let values = (0..<5).map { _ in random.next() }
        #expect(values == [
            6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423,
            4_593_380_528_125_082_431, 16_408_922_859_458_223_821,
        ])
    }

    @Test func xoshiroSeededThroughSplitMixMatchesTheReferenceSequence() {
        var random = Xoshiro256StarStar(seed: 42)
        let values = (0..<5).map { _ in random.next() }
        #expect(values == [
            1_546_998_764_402_558_742, 6_990_951_692_964_543_102, 12_544_586_762_248_559_009,
            17_057_574_109_182_124_193, 18_295_552_978_065_317_476,
        ])
    }

    @Test func boundedNumbersStayBelowTheBoundAndCoverIt() {
        var random = Xoshiro256StarStar(seed: 7)
        var seen = Set<UInt32>()
        for _ in 0..<10_000 {
            let value = random.next(below: 13)
            #expect(value < 13)
            seen.insert(value)
        }
        #expect(seen.count == 13)
    }
}
