import Foundation
import RetroRapidBots
import RetroRapidRules
import RetroRapidSupport

/// `retrorapid sim`: plays many seeded games with a built-in bot and prints a summary
/// line per level. With --expect-survival it exits 1 if any game crashed (CI uses it).
enum SimCommand: Command {
    static let name = "sim"
    static let summary = "play seeded games with a built-in bot and summarise them"
    static let usage = """
        usage: retrorapid sim [--level cruise|fast|rapid|all] [--seeds N] [--first-seed S]
                              [--steps N] [--bot perfect|cues|random] [--threads N] [--expect-survival]

          --level            speed level to play, or all three (default: all)
          --seeds            how many games, one per seed (default: 1000)
          --first-seed       the first seed; games use S, S+1, ... (default: 1)
          --steps            a game that reaches this many steps survived (default: 2000)
          --bot              perfect: sees the grid and plans ahead, one lane a step at most
                             cues: hears only the safe-lane cues, as an audio-only player does
                             random: moves at random, the baseline (default: perfect)
          --threads          threads to spread the games over (default: 1, for steps/s per core)
          --expect-survival  exit with status 1 unless every game survived

        Prints one line per level: games survived out of played, mean and max score,
        steps simulated and steps per second. Example:
          retrorapid sim --level rapid --seeds 1000 --steps 5000 --bot cues
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed: ParsedArguments
        let levels: [SpeedLevel]
        let simulationTemplate: (BotKind, ClosedRange<UInt64>, Int)
        let threads: Int
        do {
            parsed = try ParsedArguments(
                arguments,
                booleanFlags: ["expect-survival"],
                valueOptions: ["level", "seeds", "first-seed", "steps", "bot", "threads"]
            )
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
            let level = try parsed.string("level", default: "all", allowed: ["all"] + SpeedLevel.allCases.map(\.rawValue))
            levels = level == "all" ? SpeedLevel.allCases : [SpeedLevel(rawValue: level)!]
            let bot = BotKind(rawValue: try parsed.string("bot", default: "perfect", allowed: BotKind.allCases.map(\.rawValue)))!
            let seeds = try parsed.int("seeds", default: 1_000, range: 1...10_000_000)
            let firstSeed = try parsed.int("first-seed", default: 1, range: 0...Int.max - 10_000_000)
            let steps = try parsed.int("steps", default: 2_000, range: 1...100_000_000)
            threads = try parsed.int("threads", default: 1, range: 1...256)
            simulationTemplate = (bot, UInt64(firstSeed)...UInt64(firstSeed + seeds - 1), steps)
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        }
        var everySurvived = true
        for level in levels {
            let (bot, seeds, steps) = simulationTemplate
            let summary = Simulation(level: level, bot: bot, seeds: seeds, maxSteps: steps).run(threads: threads)
            print(summary.report)
            everySurvived = everySurvived && summary.allSurvived
        }
        if parsed.flag("expect-survival") && !everySurvived {
            RetroRapidMain.printError("not every game survived (see crashed_seeds above)")
            return 1
        }
        return 0
    }
}
