import Foundation
import RetroRapidRules
import RetroRapidPostgreSQL
import RetroRapidSQLite

extension StorageFactory {
    /// What `retrorapid bench-storage` asked for.
    public struct BenchmarkOptions: Sendable {
        public var scores: Int
        public var games: Int
        public var queries: Int
        public var runningGames: Int
        public var migrationsPath: String
        /// Where the temporary folder of throwaway stores is made.
        public var parent: String
        /// A PostgreSQL server to measure instead of SQLite (as a user who may create
        /// databases): the benchmark makes a database of its own there and drops it after.
        public var postgresURL: String?

        public init(scores: Int, games: Int, queries: Int, runningGames: Int, migrationsPath: String, parent: String,
                    postgresURL: String? = nil) {
            self.scores = scores
            self.games = games
            self.queries = queries
            self.runningGames = runningGames
            self.migrationsPath = migrationsPath
            self.parent = parent
            self.postgresURL = postgresURL
        }
    }

    /// The backend's storage benchmark on throwaway stores of its own (never the configured
    /// one): finished games per second, leaderboard latency, checkpoints and recovery, one
    /// line per figure to `report`. `pool` is real finished games (played by the caller's
    /// bots) to store. For SQLite, `SQLiteStorageBench`; for PostgreSQL, `PostgresStorageBench`.
    public static func benchmark(_ options: BenchmarkOptions,
                                 pool: [(seed: UInt64, level: SpeedLevel, log: InputLog, score: Int, steps: Int)],
                                 report: (String) -> Void) throws {
        if let postgresURL = options.postgresURL {
            try PostgresStorageBench.run(
                adminURL: postgresURL, scores: options.scores, games: options.games, queries: options.queries,
                runningGames: options.runningGames,
                migrations: URL(fileURLWithPath: options.migrationsPath, isDirectory: true).appendingPathComponent("postgresql"),
                pool: pool, report: report)
            return
        }
        try SQLiteStorageBench.run(
            scores: options.scores, games: options.games, queries: options.queries, runningGames: options.runningGames,
            migrations: URL(fileURLWithPath: options.migrationsPath, isDirectory: true),
            parent: URL(fileURLWithPath: options.parent, isDirectory: true), pool: pool, report: report)
    }
}
