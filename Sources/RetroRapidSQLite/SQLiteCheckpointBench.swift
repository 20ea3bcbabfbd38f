import Dispatch
import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQL

/// `bench-storage`'s checkpoint figures on SQLite (`CheckpointBenchmark` plays the workload):
/// a fresh file at `synchronous=FULL`, as the server runs, with 1,000 players of unlimited play.
enum SQLiteCheckpointBench {
    struct Game {
        var seed: UInt64
        var level: SpeedLevel
        var log: InputLog
    }

    static func run(folder: URL, migrations: URL, games: Int, pool: [Game]) throws -> [String] {
        let db = try Database(path: folder.appendingPathComponent("checkpoints.sqlite").path, synchronous: .full)
        try Migrator(database: db, directory: migrations).migrate()
        let repository = SQLRunningGameRepository(sqlite: SQLiteExecutor(database: db))
        // Players with unlimited play, so the starts consume no free play and the recovery
        // still offers every score to the leaderboards.
        var players: [Int64] = []
        try db.transaction(.immediate) { db in
            let insert = try db.prepare("INSERT INTO players (public_id, display_name, created_at) VALUES (?, ?, ?)")
            let unlimited = try db.prepare("""
                INSERT INTO unlimited_entitlements (player_id, source, reference, granted_at) VALUES (?, 'operator', 'bench', ?)
                """)
            for index in 0..<1000 {
                try insert.execute(["c\(index)", "Racer \(index)", "2026-01-01T00:00:00Z"])
                players.append(db.lastInsertRowID)
                try unlimited.execute([db.lastInsertRowID, "2026-01-01T00:00:00Z"])
            }
        }
        return try CheckpointBenchmark.run(
            repository, players: players, games: games, pool: pool.map { ($0.seed, $0.level, $0.log) },
            checkpointRows: { try db.prepare("SELECT count(*) FROM game_checkpoints").query { $0.int(at: 0) }.first ?? 0 })
    }
}
