import Dispatch
import Foundation
import RetroRapidRules
import RetroRapidDomain

/// `bench-storage`'s checkpoint figures on SQLite: what the server's storage thread spends keeping
/// `games` running games recoverable (docs/OPERATIONS.md, "A crash of the server").
///
/// Each game replays a real game's log (`pool`) from a random point, two steps a second (about
/// Fast's pace), and every simulated second one `RunningGameRepository.checkpoint` appends what
/// changed in every game, as the hub does; every 60th is the compacting one. No sleeping: the
/// checkpoints run back to back, each timed alone. Then `recoverAll` ends them all as a
/// restart after a crash would. `synchronous=FULL`, as the server runs.
enum SQLiteCheckpointBench {
    struct Game {
        var seed: UInt64
        var level: SpeedLevel
        var log: InputLog
    }

    static let simulatedSeconds = 120
    static let stepsPerSecond = 2

    static func run(folder: URL, migrations: URL, games: Int, pool: [Game]) throws -> [String] {
        let db = try Database(path: folder.appendingPathComponent("checkpoints.sqlite").path, synchronous: .full)
        try Migrator(database: db, directory: migrations).migrate()
        let start = Date(timeIntervalSince1970: 1_768_478_400)  // 2026-01-15T12:00:00Z
        let repository = SQLiteRunningGameRepository(database: db)
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
        var running: [(id: String, game: Game, offset: Int, steps: Int, moves: Int)] = []
        for index in 0..<games {
            let game = pool[index % pool.count]
            let id = String(format: "%016llx", UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
            try repository.begin(RunningGameStart(publicID: id, playerID: players[index % players.count], level: game.level,
                                                  seed: game.seed, practice: false, startedAt: start))
            let room = max(0, game.log.steps - simulatedSeconds * stepsPerSecond)
            running.append((id, game, Int.random(in: 0...room), -1, 0))
        }

        var plain: [UInt64] = []
        var compacting: [UInt64] = []
        var rows = 0
        for second in 1...simulatedSeconds {
            let compact = second % 60 == 0
            var batch: [GameCheckpoint] = []
            for index in running.indices {
                let game = running[index]
                let steps = min(game.game.log.steps, game.offset + second * stepsPerSecond)
                let moves = game.game.log.moves.prefix { $0.afterStep < steps }.count
                guard compact || steps != game.steps else { continue }
                let before = compact ? 0 : game.moves
                batch.append(GameCheckpoint(
                    publicID: game.id, steps: steps, movesBefore: before,
                    moves: Array(game.game.log.moves[before..<moves]), durationMilliseconds: second * 1000))
                running[index].steps = steps
                running[index].moves = moves
            }
            rows += batch.count
            let began = DispatchTime.now().uptimeNanoseconds
            try repository.checkpoint(batch, compacting: compact, now: start.addingTimeInterval(Double(second)))
            let took = DispatchTime.now().uptimeNanoseconds - began
            if compact { compacting.append(took) } else { plain.append(took) }
        }
        let left = try db.prepare("SELECT count(*) FROM game_checkpoints").query { $0.int(at: 0) }.first ?? 0
        let began = DispatchTime.now().uptimeNanoseconds
        let recovered = try repository.recoverAll(now: start.addingTimeInterval(Double(simulatedSeconds + 60)))
        let recovery = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        return [
            "checkpoint running_games=\(games) rows_per_second=\(rows / simulatedSeconds) \(latency(plain))",
            "checkpoint_compacting \(latency(compacting)) rows_left=\(left)",
            "recover_after_crash games=\(recovered.count) seconds=\(String(format: "%.2f", recovery))",
        ]
    }

    private static func latency(_ nanoseconds: [UInt64]) -> String {
        let sorted = nanoseconds.sorted()
        guard let last = sorted.last else { return "n=0" }
        func ms(_ value: UInt64) -> String { String(format: "%.1f", Double(value) / 1e6) }
        return "n=\(sorted.count) median_ms=\(ms(sorted[sorted.count / 2])) max_ms=\(ms(last))"
    }
}
