import Foundation
import RetroRapidBots
import RetroRapidSupport

/// `retrorapid bench-engine`: the engine's speed on one core. Allocations per step are
/// counted from outside by scripts/bench-engine.sh (valgrind), not here.
enum BenchEngineCommand: Command {
    static let name = "bench-engine"
    static let summary = "measure engine steps per second on one core"
    static let usage = """
        usage: retrorapid bench-engine [--steps N] [--runs N]

          --steps  steps per run (default: 20000000)
          --runs   runs; the median is reported (default: 5)

        Runs one game on this thread, moving as a cue-following player does, and prints
        each run and the median steps per second. Build with -c release first.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let steps: Int
        let runs: Int
        do {
            let parsed = try ParsedArguments(arguments, valueOptions: ["steps", "runs"])
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
            steps = try parsed.int("steps", default: 20_000_000, range: 1...1_000_000_000)
            runs = try parsed.int("runs", default: 5, range: 1...100)
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        }
        var rates: [Double] = []
        for index in 1...runs {
            let run = EngineBenchmark.run(steps: steps)
            rates.append(run.stepsPerSecond)
            print("run=\(index) steps=\(run.steps) moves=\(run.moves) seconds=\(String(format: "%.3f", run.seconds)) steps_per_second=\(Int(run.stepsPerSecond))")
        }
        let sorted = rates.sorted()
        let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        print("median_steps_per_second=\(Int(median)) min=\(Int(sorted.first!)) max=\(Int(sorted.last!)) runs=\(runs)")
        return 0
    }
}
