import Foundation
import Testing
import RetroRapidBots
import RetroRapidRules

/// The road's promise, proved by playing instead of by argument: over 10,000 seeds
/// and 2,000 steps at every level, a perfect player who changes at most one lane per
/// step never crashes, and neither does a player who hears only the safe-lane cues.
struct SurvivalPropertyTests {
    /// 10,000, or RETRORAPID_TEST_SURVIVAL_SEEDS: `make test-sanitizers` plays fewer
    /// (scripts/test-sanitizers.sh), as 120 million steps under ThreadSanitizer take hours.
    static let seedCount = ProcessInfo.processInfo.environment["RETRORAPID_TEST_SURVIVAL_SEEDS"].flatMap { Int($0) } ?? 10_000
    static let seeds: ClosedRange<UInt64> = 1...UInt64(seedCount)
    static let steps = 2_000

    @Test(arguments: SpeedLevel.allCases)
    func aPerfectPlayerSurvivesEverySeed(level: SpeedLevel) {
        let summary = Simulation(level: level, bot: .perfect, seeds: Self.seeds, maxSteps: Self.steps).run(threads: 2)
        #expect(summary.gamesPlayed == Self.seedCount)
        #expect(summary.allSurvived, "crashed on seeds \(summary.crashedSeeds)")
        #expect(summary.stepsSimulated == Self.seedCount * Self.steps)
    }

    @Test(arguments: SpeedLevel.allCases)
    func aPlayerHearingOnlyTheCuesSurvivesEverySeed(level: SpeedLevel) {
        let summary = Simulation(level: level, bot: .cues, seeds: Self.seeds, maxSteps: Self.steps).run(threads: 2)
        #expect(summary.gamesPlayed == Self.seedCount)
        #expect(summary.allSurvived, "crashed on seeds \(summary.crashedSeeds)")
    }

    /// The baseline: without looking or listening, players crash, so surviving above
    /// is the bots' doing and not an empty road's.
    @Test(arguments: SpeedLevel.allCases)
    func aRandomPlayerCrashesAlmostAlways(level: SpeedLevel) {
        let summary = Simulation(level: level, bot: .random, seeds: 1...1_000, maxSteps: Self.steps).run(threads: 2)
        #expect(summary.gamesSurvived < 10)
        #expect(summary.meanScore > 0)
    }
}
