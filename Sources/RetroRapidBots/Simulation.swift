import Dispatch
import Foundation
import RetroRapidRules
import Synchronization

/// Plays many seeded games with a built-in bot: for designers tuning the road, for CI
/// proving that the road is always survivable, and for the engine benchmark.
public struct Simulation: Sendable {
    public var level: SpeedLevel
    public var bot: BotKind
    public var seeds: ClosedRange<UInt64>
    /// A game that reaches this many steps without crashing counts as survived.
    public var maxSteps: Int

    public init(level: SpeedLevel, bot: BotKind, seeds: ClosedRange<UInt64>, maxSteps: Int) {
        self.level = level
        self.bot = bot
        self.seeds = seeds
        self.maxSteps = maxSteps
    }

    /// One game's outcome.
    public struct GameResult: Equatable, Sendable {
        public var seed: UInt64
        public var score: Int
        public var steps: Int
        public var survived: Bool
    }

    /// Plays one game to a crash or to `maxSteps`. Bot moves are made on time, between
    /// steps, so the game's log replays to the same result.
    public static func play<B: Bot>(seed: UInt64, level: SpeedLevel, maxSteps: Int, bot: inout B) -> (GameResult, Game) {
        var game = Game(seed: seed, level: level)
        do {
            playing: while game.state.step < maxSteps {
                try game.step(into: &bot)
                if game.state.isOver { break }
                let moves = bot.nextMoves()
                if let direction = moves.direction {
                    for _ in 0..<moves.count {
                        try game.move(direction, seenStep: game.state.step, into: &bot)
                        if game.state.isOver { break playing }
                    }
                }
            }
        } catch {
            preconditionFailure("a simulated game refused an input: \(error)")
        }
        let state = game.state
        return (GameResult(seed: seed, score: state.score, steps: state.step, survived: !state.isOver), game)
    }

    /// Plays one game with a fresh bot of this simulation's kind.
    public func play(seed: UInt64) -> GameResult {
        switch bot {
        case .perfect:
            var player = PerfectBot()
            return Simulation.play(seed: seed, level: level, maxSteps: maxSteps, bot: &player).0
        case .cues:
            var player = AudioOnly(CueBot())
            return Simulation.play(seed: seed, level: level, maxSteps: maxSteps, bot: &player).0
        case .random:
            var player = RandomBot(seed: seed)
            return Simulation.play(seed: seed, level: level, maxSteps: maxSteps, bot: &player).0
        }
    }

    /// Plays every seed, split over `threads` threads, and sums up.
    public func run(threads: Int = 1) -> SimulationSummary {
        let threads = max(1, threads)
        let partials = Mutex<[SimulationSummary]>([])
        let start = DispatchTime.now().uptimeNanoseconds
        let count = seeds.upperBound - seeds.lowerBound + 1
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            var partial = SimulationSummary(level: level, bot: bot)
            var index = UInt64(worker)
            while index < count {
                partial.add(play(seed: seeds.lowerBound + index))
                index += UInt64(threads)
            }
            let finished = partial
            partials.withLock { $0.append(finished) }
        }
        var total = SimulationSummary(level: level, bot: bot)
        for partial in partials.withLock({ $0 }) { total.merge(partial) }
        total.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        total.threads = threads
        return total
    }
}

/// What `retrorapid sim` prints.
public struct SimulationSummary: Sendable {
    public var level: SpeedLevel
    public var bot: BotKind
    public var gamesPlayed = 0
    public var gamesSurvived = 0
    public var totalScore = 0
    public var maxScore = 0
    public var stepsSimulated = 0
    public var seconds = 0.0
    public var threads = 1
    /// The first few seeds whose game crashed, to reproduce them.
    public var crashedSeeds: [UInt64] = []

    public init(level: SpeedLevel, bot: BotKind) {
        self.level = level
        self.bot = bot
    }

    public var meanScore: Double { gamesPlayed == 0 ? 0 : Double(totalScore) / Double(gamesPlayed) }
    public var stepsPerSecond: Double { seconds > 0 ? Double(stepsSimulated) / seconds : 0 }
    public var allSurvived: Bool { gamesPlayed > 0 && gamesSurvived == gamesPlayed }

    mutating func add(_ result: Simulation.GameResult) {
        gamesPlayed += 1
        if result.survived { gamesSurvived += 1 } else if crashedSeeds.count < 10 { crashedSeeds.append(result.seed) }
        totalScore += result.score
        maxScore = max(maxScore, result.score)
        stepsSimulated += result.steps
    }

    mutating func merge(_ other: SimulationSummary) {
        gamesPlayed += other.gamesPlayed
        gamesSurvived += other.gamesSurvived
        totalScore += other.totalScore
        maxScore = max(maxScore, other.maxScore)
        stepsSimulated += other.stepsSimulated
        crashedSeeds = Array((crashedSeeds + other.crashedSeeds).sorted().prefix(10))
    }

    /// One line for people and one for scripts would be two formats; this is both.
    public var report: String {
        let mean = (meanScore * 10).rounded() / 10
        var line = "level=\(level.rawValue) bot=\(bot.rawValue) survived=\(gamesSurvived)/\(gamesPlayed)"
            + " mean_score=\(mean) max_score=\(maxScore) steps=\(stepsSimulated)"
            + " seconds=\(String(format: "%.3f", seconds)) threads=\(threads)"
            + " steps_per_second=\(Int(stepsPerSecond))"
        if !crashedSeeds.isEmpty { line += " crashed_seeds=" + crashedSeeds.map(String.init).joined(separator: ",") }
        return line
    }
}
