import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidRules

/// `retrorapid bench-storage --postgres-url URL`'s measurements on PostgreSQL, beside
/// SQLite's (`SQLiteStorageBench`, whose figures these mirror): in a database of its own made on
/// that server and dropped afterwards (never the configured one).
///
/// 1. Finished games per second: `GameRepository.record`, each call its own transaction as the
///    server does, with `synchronous_commit=on` (the default: a commit that returned is on
///    the server's disk) and then `off` for comparison.
/// 2. A board of `scores` best scores on Fast / all time, filled by the server itself
///    (`generate_series`), the trigger keeping `score_counts` as the game path does.
/// 3. Latency over `queries` random queries: top 20, a page at a random depth, around-me with
///    5 neighbours, `record` on the full board.
/// 4. Checkpoints of `runningGames` running games once a simulated second for 120 s, and
///    their recovery.
///
/// One connection, from this process, over the URL given: over loopback on one machine that
/// is the round trip a node next to its database pays.
public enum PostgresStorageBench {
    public typealias PlayedGame = RecordBenchmark.PlayedGame

    static var boardNow: Date { RecordBenchmark.boardNow }

    public static func run(adminURL: String, scores: Int, games: Int, queries: Int, runningGames: Int, migrations: URL,
                           pool: [PlayedGame], report: (String) -> Void) throws {
        let admin = try PostgresConnection(conninfo: adminURL)
        let name = "retrorapid_bench_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try admin.executeScript("CREATE DATABASE \(name)")
        defer { try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        guard var components = URLComponents(string: adminURL) else {
            throw PostgresError(sqlState: "", message: "--postgres-url is not a URL")
        }
        components.path = "/" + name
        let url = components.string!
        let db = try PostgresConnection(conninfo: url)
        try PostgresMigrator(connection: db, directory: migrations).migrate()
        let version = try db.execute("SHOW server_version").first?.string(at: 0) ?? "?"
        report("folder=postgresql database=\(name) postgresql=\(version)")

        var random = SystemRandomNumberGenerator()
        let players = try addPlayers(db, count: 1000, prefix: "g")
        for synchronous in ["on", "off"] {
            try db.execute("SELECT set_config('synchronous_commit', $1, false)", [synchronous])
            let result = try RecordBenchmark.run(SQLGameRepository(executor: db), count: games, players: players, pool: pool, random: &random)
            report("record synchronous_commit=\(synchronous) \(result)")
        }
        try db.execute("SELECT set_config('synchronous_commit', 'on', false)")

        let fillStart = StorageBenchmarkTiming.now()
        let boardPlayers = try fillBoard(db, scores: scores)
        let fillSeconds = StorageBenchmarkTiming.seconds(since: fillStart)
        let bytes = try db.execute("SELECT pg_database_size(current_database())").first?.int(at: 0) ?? 0
        report("fill scores=\(scores) seconds=\(String(format: "%.1f", fillSeconds)) rows_per_second=\(Int(Double(scores) / fillSeconds)) database_mb=\(bytes / 1_000_000)")

        let boards = SQLLeaderboardRepository(executor: db)
        _ = try boards.top(level: .fast, period: .allTime, limit: 20, now: boardNow)
        var top: [UInt64] = []
        for _ in 0..<queries {
            let start = StorageBenchmarkTiming.now()
            let page = try boards.top(level: .fast, period: .allTime, limit: 20, now: boardNow)
            top.append(StorageBenchmarkTiming.now() - start)
            precondition(page.entries.count == 20)
        }
        report("top20_first_page \(StorageBenchmarkTiming.latency(top))")

        var around: [UInt64] = []
        var deep: [UInt64] = []
        var ranks: [Int] = []
        for _ in 0..<queries {
            let player = boardPlayers.randomElement(using: &random)!
            var start = StorageBenchmarkTiming.now()
            let mine = try boards.aroundMe(playerID: player, level: .fast, period: .allTime, neighbours: 5, now: boardNow)
            around.append(StorageBenchmarkTiming.now() - start)
            guard let mine else { preconditionFailure("player \(player) has no score on the filled board") }
            ranks.append(mine.me.rank)
            guard let cursor = mine.nextCursor else { continue }
            start = StorageBenchmarkTiming.now()
            let page = try boards.top(level: .fast, period: .allTime, limit: 20, after: cursor, now: boardNow)
            deep.append(StorageBenchmarkTiming.now() - start)
            precondition(!page.entries.isEmpty)
        }
        ranks.sort()
        report("around_me_5 \(StorageBenchmarkTiming.latency(around)) rank_median=\(ranks[ranks.count / 2])")
        report("top20_page_at_random_depth \(StorageBenchmarkTiming.latency(deep))")

        let onBoard = try RecordBenchmark.run(SQLGameRepository(executor: db), count: min(games, 2000), players: boardPlayers, pool: pool, random: &random, level: .fast)
        report("record_on_full_board synchronous_commit=on \(onBoard)")

        if runningGames > 0 {
            for line in try checkpoints(db, games: runningGames, pool: pool) { report(line) }
        }
    }

    static func addPlayers(_ db: PostgresConnection, count: Int, prefix: String) throws -> [Int64] {
        try db.execute("""
            INSERT INTO players (public_id, display_name, created_at)
            SELECT $1 || g, 'Racer ' || g, '2026-01-01T00:00:00Z' FROM generate_series(1, $2::bigint) g
            RETURNING id
            """, [prefix, count]).map { $0.int64(at: 0) }
    }

    /// Players and one best score each on the Fast all-time board with the games they point at,
    /// made by the server in one statement; scores roughly exponential (mean 400) as SQLite's
    /// fill, achievement times spread over the year before `boardNow`. The counting trigger is
    /// off during the fill and `score_counts` is counted once at the end (a million trigger
    /// updates of a few thousand rows would leave a million dead row versions for VACUUM); then
    /// `VACUUM ANALYZE`, as autovacuum would have done on a server that grew the board slowly.
    static func fillBoard(_ db: PostgresConnection, scores: Int) throws -> [Int64] {
        let players = try addPlayers(db, count: scores, prefix: "b")
        try db.transaction { db in
            try db.executeScript("ALTER TABLE best_scores DISABLE TRIGGER best_scores_counted")
            try db.execute("""
                WITH scored AS (
                    SELECT id, floor(-ln(1 - random()) * 400)::bigint AS score,
                           to_char(timestamp '2025-01-15 12:00:00' + random() * interval '365 days', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS at
                    FROM players WHERE public_id LIKE 'b%'
                ), stored AS (
                    INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason,
                                       practice, started_at, ended_at, duration_ms)
                    SELECT id, 'fast', 1, 1, (score + 6) || ':', score, score + 6, 'crash', false, at, at, 60000 FROM scored
                    RETURNING id, player_id, score, started_at
                )
                INSERT INTO best_scores (level, period, period_key, player_id, score, achieved_at, game_id)
                SELECT 'fast', 'all', 'all', player_id, score, started_at, id FROM stored
                """)
            try db.execute("""
                INSERT INTO score_counts (level, period, period_key, score, players)
                SELECT level, period, period_key, score, count(*) FROM best_scores
                WHERE level = 'fast' AND period = 'all' AND period_key = 'all'
                GROUP BY level, period, period_key, score
                ON CONFLICT (level, period, period_key, score) DO UPDATE SET players = score_counts.players + excluded.players
                """)
            try db.executeScript("ALTER TABLE best_scores ENABLE TRIGGER best_scores_counted")
        }
        try db.executeScript("VACUUM ANALYZE")
        return players
    }

    /// What keeping `games` running games recoverable costs (`CheckpointBenchmark`), for players
    /// with unlimited play made here.
    static func checkpoints(_ db: PostgresConnection, games: Int, pool: [PlayedGame]) throws -> [String] {
        // A node's process writing its rounds as slices, and another (no process of its own)
        // that gathers them once the first is gone, as a node taking its games over does.
        let repository = SQLRunningGameRepository(postgres: db, process: "bench-\(UUID().uuidString.lowercased())", dailyFreePlays: 5)
        let survivor = SQLRunningGameRepository(postgres: db, dailyFreePlays: 5)
        let players = try addPlayers(db, count: 1000, prefix: "c")
        try db.execute("""
            INSERT INTO unlimited_entitlements (player_id, source, reference, granted_at)
            SELECT id, 'operator', 'bench', '2026-01-01T00:00:00Z' FROM players WHERE public_id LIKE 'c%'
            """)
        return try CheckpointBenchmark.run(
            repository, survivor: survivor, players: players, games: games, pool: pool.map { ($0.seed, $0.level, $0.log) },
            checkpointRows: {
                try db.execute("SELECT (SELECT count(*) FROM game_checkpoints) + (SELECT count(*) FROM checkpoint_slices)").first?.int(at: 0) ?? 0
            },
            logPosition: { try db.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").first?.int64(at: 0) ?? 0 })
    }
}
