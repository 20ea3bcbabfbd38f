import Foundation
import RetroRapidRules

/// `bench-storage`'s stored-games figure, the same on every backend: `count` calls of
/// `GameRepository.record`, each its own transaction as the server's, for random players and
/// the caller's real games (`pool`). Each backend makes the store and the players.
public enum RecordBenchmark {
    /// A finished game of the pool: played by the caller (the bots), stored here.
    public typealias PlayedGame = (seed: UInt64, level: SpeedLevel, log: InputLog, score: Int, steps: Int)

    /// Every fill score and query uses this moment, so all scores sit on one all-time board
    /// and the day and week boards of `record` stay small.
    public static let boardNow = Date(timeIntervalSince1970: 1_768_478_400)  // 2026-01-15T12:00:00Z

    /// The report's words: how many, how long, games a second and the latency of one `record`.
    public static func run(_ repository: any GameRepository, count: Int, players: [Int64], pool: [PlayedGame],
                           random: inout SystemRandomNumberGenerator, level: SpeedLevel? = nil) throws -> String {
        var latencies: [UInt64] = []
        latencies.reserveCapacity(count)
        let start = StorageBenchmarkTiming.now()
        for index in 0..<count {
            let played = pool.randomElement(using: &random)!
            let ended = boardNow.addingTimeInterval(Double(index % 3600))
            let game = NewGame(
                playerID: players.randomElement(using: &random)!, level: level ?? played.level, seed: played.seed,
                inputLog: played.log, score: played.score, steps: played.steps, endReason: .crash,
                startedAt: ended.addingTimeInterval(-60), endedAt: ended, durationMilliseconds: 60_000)
            let before = StorageBenchmarkTiming.now()
            try repository.record(game)
            latencies.append(StorageBenchmarkTiming.now() - before)
        }
        let total = StorageBenchmarkTiming.seconds(since: start)
        return "games=\(count) seconds=\(String(format: "%.2f", total)) games_per_second=\(Int(Double(count) / total)) "
            + StorageBenchmarkTiming.latency(latencies)
    }
}
