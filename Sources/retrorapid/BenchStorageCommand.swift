import Dispatch
import Foundation
import RetroRapidBots
import RetroRapidRules
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidSupport

/// `retrorapid bench-storage`: how fast the storage layer stores finished games and answers
/// leaderboard queries, on real database files in a temporary folder (removed afterwards).
/// The games are played here (the bots); the measuring is the backend's
/// (`StorageFactory.benchmark`, for SQLite `SQLiteStorageBench`).
///
/// 1. Finished games per second: `GameRepository.record`, each call its own IMMEDIATE
///    transaction as the server does, with `synchronous=FULL` (the server's setting) and then
///    `NORMAL` for comparison, on fresh databases. The games are real: played by the cue bot
///    to a crash, with their input logs.
/// 2. A board of `--scores` best scores (all on one board, Fast / all time: the worst case for
///    a rank, which counts the entries ahead), bulk-inserted in large transactions.
/// 3. Latency over `--queries` random queries: the top-20 page, a top-20 page at a random
///    depth (after a random player's neighbourhood), around-me with 5 neighbours each side,
///    and `record` on the full board (it ranks the player on three boards).
/// 4. Checkpoints of `--running-games` running games, and their recovery (`CheckpointBench`).
enum BenchStorageCommand: Command {
    static let name = "bench-storage"
    static let summary = "measure games stored per second and leaderboard latency"
    static let usage = """
        usage: retrorapid bench-storage [--scores N] [--games N] [--queries N] [--running-games N]
                                        [--migrations-path DIR] [--dir DIR] [--postgres-url URL]

          --scores      best scores on the big leaderboard (default: 1000000)
          --games       finished games to record for the games-per-second figure (default: 20000)
          --queries     random queries per leaderboard measurement (default: 2000)
          --running-games  running games checkpointed once a simulated second for 120 s, then
                        recovered as after a crash (default: 12000; 0 skips it)
          --migrations-path  the folder of NNNN_name.sql files (default: RETRORAPID_MIGRATIONS_PATH,
                        the env file, or looked up as serve does; --migrations is its older name)
          --dir         where to make the temporary folder (default: the system's temporary folder);
                        put it on the disk the server would use, since FULL waits for that disk
          --postgres-url  measure PostgreSQL instead: a server and a user who may create
                        databases (postgres://user@host:5432/postgres); the benchmark makes a
                        database of its own there and drops it afterwards

        Prints one line per measurement: totals, rates, and latency median and p99 in
        milliseconds. Build with -c release first (scripts/bench-storage.sh does).
        """

    static func run(arguments: [String]) throws -> Int32 {
        let scores: Int
        let games: Int
        let queries: Int
        let runningGames: Int
        let migrations: URL
        let parent: URL
        let postgresURL: String?
        do {
            let parsed = try ParsedArguments(arguments, valueOptions: ["scores", "games", "queries", "running-games", "migrations-path", "dir", "postgres-url"],
                                             aliases: ["migrations": "migrations-path"])
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
            scores = try parsed.int("scores", default: 1_000_000, range: 100...100_000_000)
            games = try parsed.int("games", default: 20_000, range: 1...10_000_000)
            queries = try parsed.int("queries", default: 2_000, range: 10...10_000_000)
            runningGames = try parsed.int("running-games", default: 12_000, range: 0...1_000_000)
            migrations = URL(fileURLWithPath: try OperatorDatabase.migrationsFolder(parsed), isDirectory: true)
            parent = parsed.value("dir").map { URL(fileURLWithPath: $0, isDirectory: true) } ?? FileManager.default.temporaryDirectory
            postgresURL = parsed.value("postgres-url")
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        }

        var random = SystemRandomNumberGenerator()
        let pool = playGames(count: 200, random: &random)
        let meanLog = pool.map(\.log.encoded.utf8.count).reduce(0, +) / pool.count
        let options = StorageFactory.BenchmarkOptions(
            scores: scores, games: games, queries: queries, runningGames: runningGames,
            migrationsPath: migrations.path, parent: parent.path, postgresURL: postgresURL)
        try StorageFactory.benchmark(options, pool: pool.map { ($0.seed, $0.level, $0.log, $0.score, $0.steps) }) { line in
            print(line)
            // After the backend's first line (its folder and version), the pool's.
            if line.hasPrefix("folder=") {
                print("game_pool games=\(pool.count) mean_steps=\(pool.map(\.log.steps).reduce(0, +) / pool.count) mean_log_bytes=\(meanLog)")
            }
        }
        return 0
    }

    struct PlayedGame {
        var seed: UInt64
        var level: SpeedLevel
        var log: InputLog
        var score: Int
        var steps: Int
    }

    /// Real games: the cue bot follows the cues for a random number of steps, then stops
    /// moving until it crashes, as a player who gives up would.
    static func playGames(count: Int, random: inout SystemRandomNumberGenerator) -> [PlayedGame] {
        (0..<count).map { _ in
            let seed = UInt64.random(in: 0...UInt64.max, using: &random)
            let level = SpeedLevel.allCases.randomElement(using: &random)!
            var bot = AudioOnly(CueBot())
            var (_, game) = Simulation.play(seed: seed, level: level, maxSteps: Int.random(in: 20...1500, using: &random), bot: &bot)
            var sink = DiscardingSink()
            do {
                while !game.state.isOver { try game.step(into: &sink) }
            } catch {
                preconditionFailure("the benchmark's game refused a step: \(error)")
            }
            return PlayedGame(seed: seed, level: level, log: game.log, score: game.state.score, steps: game.state.step)
        }
    }
}
