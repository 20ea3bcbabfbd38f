import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// `retrorapid bench-storage`'s measurements on SQLite, on real database files in a temporary
/// folder under `parent` (removed afterwards):
///
/// 1. Finished games per second: `GameRepository.record`, each call its own IMMEDIATE
///    transaction as the server does, with `synchronous=FULL` (the server's setting) and then
///    `NORMAL` for comparison, on fresh databases, with the caller's real games (`pool`).
/// 2. A board of `scores` best scores (all on one board, Fast / all time: the worst case for
///    a rank, which counts the entries ahead), bulk-inserted in large transactions.
/// 3. Latency over `queries` random queries: the top-20 page, a top-20 page at a random
///    depth (after a random player's neighbourhood), around-me with 5 neighbours each side,
///    and `record` on the full board (it ranks the player on three boards).
/// 4. Checkpoints of `runningGames` running games, and their recovery (`SQLiteCheckpointBench`).
///
/// `report` gets one line per measurement: totals, rates, and latency median and p99 in ms.
public enum SQLiteStorageBench {
    public static func run(scores: Int, games: Int, queries: Int, runningGames: Int, migrations: URL, parent: URL,
                           pool: [PlayedGame], report: (String) -> Void) throws {
        let folder = parent.appendingPathComponent("retrorapid-bench-storage-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = try Database(path: ":memory:").prepare("SELECT sqlite_version()").query { $0.string(at: 0) }.first ?? "?"
        report("folder=\(folder.path) sqlite=\(version)")

        var random = SystemRandomNumberGenerator()

        for synchronous in [Database.Synchronous.full, .normal] {
            let path = folder.appendingPathComponent("games-\(synchronous.rawValue.lowercased()).sqlite").path
            let db = try Database(path: path, synchronous: synchronous)
            try Migrator(database: db, directory: migrations).migrate()
            let players = try Self.addPlayers(db, count: 1000, prefix: "g")
            let result = try RecordBenchmark.run(SQLGameRepository(executor: SQLiteExecutor(database: db)), count: games, players: players, pool: pool, random: &random)
            report("record synchronous=\(synchronous.rawValue) \(result)")
        }

        let path = folder.appendingPathComponent("board.sqlite").path
        let fillStart = StorageBenchmarkTiming.now()
        let players: [Int64]
        do {
            // The fill gets a connection of its own with a big page cache (it is setup, not a
            // measurement); the queries below use a fresh one with the defaults, as the server.
            let filler = try Database(path: path, synchronous: .normal)
            try Migrator(database: filler, directory: migrations).migrate()
            try filler.execute(sql: "PRAGMA cache_size = -524288")
            players = try Self.fillBoard(filler, scores: scores, random: &random)
        }
        let fillSeconds = StorageBenchmarkTiming.seconds(since: fillStart)
        let db = try Database(path: path, synchronous: .full)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        report("fill scores=\(scores) seconds=\(String(format: "%.1f", fillSeconds)) rows_per_second=\(Int(Double(scores) / fillSeconds)) database_mb=\(bytes / 1_000_000)")

        let boards = SQLLeaderboardRepository(executor: SQLiteExecutor(database: db))
        let now = Self.boardNow
        // Warm the cache as a running server's would be.
        _ = try boards.top(level: .fast, period: .allTime, limit: 20, now: now)

        var top: [UInt64] = []
        for _ in 0..<queries {
            let start = StorageBenchmarkTiming.now()
            let page = try boards.top(level: .fast, period: .allTime, limit: 20, now: now)
            top.append(StorageBenchmarkTiming.now() - start)
            precondition(page.entries.count == 20)
        }
        report("top20_first_page \(StorageBenchmarkTiming.latency(top))")

        var around: [UInt64] = []
        var deep: [UInt64] = []
        var ranks: [Int] = []
        for _ in 0..<queries {
            let player = players.randomElement(using: &random)!
            var start = StorageBenchmarkTiming.now()
            let mine = try boards.aroundMe(playerID: player, level: .fast, period: .allTime, neighbours: 5, now: now)
            around.append(StorageBenchmarkTiming.now() - start)
            guard let mine else { preconditionFailure("player \(player) has no score on the filled board") }
            ranks.append(mine.me.rank)
            guard let cursor = mine.nextCursor else { continue }
            start = StorageBenchmarkTiming.now()
            let page = try boards.top(level: .fast, period: .allTime, limit: 20, after: cursor, now: now)
            deep.append(StorageBenchmarkTiming.now() - start)
            precondition(!page.entries.isEmpty)
        }
        ranks.sort()
        report("around_me_5 \(StorageBenchmarkTiming.latency(around)) rank_median=\(ranks[ranks.count / 2])")
        report("top20_page_at_random_depth \(StorageBenchmarkTiming.latency(deep))")

        // For comparison: the rank as one COUNT of every entry ahead in best_scores_ranking,
        // the first design, whose cost grows with the rank.
        let countAhead = try db.prepare("""
            SELECT (SELECT count(*) FROM best_scores WHERE level = 'fast' AND period = 'all' AND period_key = 'all' AND score > ?1)
                 + (SELECT count(*) FROM best_scores WHERE level = 'fast' AND period = 'all' AND period_key = 'all'
                    AND score = ?1 AND (achieved_at, player_id) < (?2, ?3))
            """)
        let position = try db.prepare("SELECT score, achieved_at FROM best_scores WHERE player_id = ? AND level = 'fast' AND period = 'all' AND period_key = 'all'")
        var counted: [UInt64] = []
        for _ in 0..<min(queries, 200) {
            let player = players.randomElement(using: &random)!
            let (score, achievedAt) = try position.query([player]) { ($0.int(at: 0), $0.string(at: 1)) }[0]
            let start = StorageBenchmarkTiming.now()
            _ = try countAhead.query([score, achievedAt, player]) { $0.int(at: 0) }
            counted.append(StorageBenchmarkTiming.now() - start)
        }
        report("rank_by_count_of_entries_ahead_only \(StorageBenchmarkTiming.latency(counted))")

        let onBoard = try RecordBenchmark.run(SQLGameRepository(executor: SQLiteExecutor(database: db)), count: min(games, 2000), players: players, pool: pool, random: &random, level: .fast)
        report("record_on_full_board synchronous=FULL \(onBoard)")

        if runningGames > 0 {
            let games = pool.map { SQLiteCheckpointBench.Game(seed: $0.seed, level: $0.level, log: $0.log) }
            for line in try SQLiteCheckpointBench.run(folder: folder, migrations: migrations, games: runningGames, pool: games) {
                report(line)
            }
        }
    }

    public typealias PlayedGame = RecordBenchmark.PlayedGame

    static var boardNow: Date { RecordBenchmark.boardNow }

    static func addPlayers(_ db: Database, count: Int, prefix: String) throws -> [Int64] {
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        let insert = try db.prepare("INSERT INTO players (public_id, display_name, created_at) VALUES (?, ?, ?)")
        var next = 0
        while next < count {
            let end = min(count, next + 100_000)
            try db.transaction(.immediate) { db in
                for index in next..<end {
                    try insert.execute(["\(prefix)\(index)", "Racer \(index)", "2026-01-01T00:00:00Z"])
                    ids.append(db.lastInsertRowID)
                }
            }
            next = end
        }
        return ids
    }

    /// Players and one best score each on the Fast all-time board, with the games they point
    /// at, in transactions of 100,000 rows. Scores are roughly exponential (mean 400), so many
    /// players tie and the achievement time decides.
    static func fillBoard(_ db: Database, scores: Int, random: inout SystemRandomNumberGenerator) throws -> [Int64] {
        let players = try addPlayers(db, count: scores, prefix: "b")
        let game = try db.prepare("""
            INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason,
                               practice, started_at, ended_at, duration_ms)
            VALUES (?, 'fast', 1, 1, ?, ?, ?, 'crash', 0, ?, ?, 60000)
            """)
        let best = try db.prepare("""
            INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
            VALUES ('fast', 'all', 'all', ?, ?, ?, ?)
            """)
        let yearStart = boardNow.addingTimeInterval(-365 * 86_400)
        var next = 0
        while next < players.count {
            let end = min(players.count, next + 100_000)
            try db.transaction(.immediate) { db in
                for player in players[next..<end] {
                    let score = Int(-log(Double.random(in: Double.ulpOfOne..<1, using: &random)) * 400)
                    let steps = score + 6
                    let achieved = timestamp(yearStart.addingTimeInterval(Double.random(in: 0..<(365 * 86_400), using: &random)))
                    try game.execute([player, "\(steps):", score, steps, achieved, achieved])
                    try best.execute([player, score, achieved, db.lastInsertRowID])
                }
            }
            next = end
        }
        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        return players
    }

    static func timestamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
