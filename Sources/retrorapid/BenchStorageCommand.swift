import Dispatch
import Foundation
import RetroRapidBots
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport

/// `retrorapid bench-storage`: how fast the storage layer stores finished games and answers
/// leaderboard queries, on real database files in a temporary folder (removed afterwards).
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
                                        [--migrations DIR] [--dir DIR]

          --scores      best scores on the big leaderboard (default: 1000000)
          --games       finished games to record for the games-per-second figure (default: 20000)
          --queries     random queries per leaderboard measurement (default: 2000)
          --running-games  running games checkpointed once a simulated second for 120 s, then
                        recovered as after a crash (default: 12000; 0 skips it)
          --migrations  the folder of NNNN_name.sql files (default: Migrations)
          --dir         where to make the temporary folder (default: the system's temporary folder);
                        put it on the disk the server would use, since FULL waits for that disk

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
        do {
            let parsed = try ParsedArguments(arguments, valueOptions: ["scores", "games", "queries", "running-games", "migrations", "dir"])
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
            scores = try parsed.int("scores", default: 1_000_000, range: 100...100_000_000)
            games = try parsed.int("games", default: 20_000, range: 1...10_000_000)
            queries = try parsed.int("queries", default: 2_000, range: 10...10_000_000)
            runningGames = try parsed.int("running-games", default: 12_000, range: 0...1_000_000)
            migrations = URL(fileURLWithPath: parsed.value("migrations") ?? "Migrations", isDirectory: true)
            parent = parsed.value("dir").map { URL(fileURLWithPath: $0, isDirectory: true) } ?? FileManager.default.temporaryDirectory
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        }

        let folder = parent.appendingPathComponent("retrorapid-bench-storage-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = try Database(path: ":memory:").prepare("SELECT sqlite_version()").query { $0.string(at: 0) }.first ?? "?"
        print("folder=\(folder.path) sqlite=\(version)")

        var random = SystemRandomNumberGenerator()
        let pool = StorageBench.playGames(count: 200, random: &random)
        let meanLog = pool.map(\.log.encoded.utf8.count).reduce(0, +) / pool.count
        print("game_pool games=\(pool.count) mean_steps=\(pool.map(\.log.steps).reduce(0, +) / pool.count) mean_log_bytes=\(meanLog)")

        for synchronous in [Database.Synchronous.full, .normal] {
            let path = folder.appendingPathComponent("games-\(synchronous.rawValue.lowercased()).sqlite").path
            let db = try Database(path: path, synchronous: synchronous)
            try Migrator(database: db, directory: migrations).migrate()
            let players = try StorageBench.addPlayers(db, count: 1000, prefix: "g")
            let result = try StorageBench.recordGames(db, count: games, players: players, pool: pool, random: &random)
            print("record synchronous=\(synchronous.rawValue) \(result)")
        }

        let path = folder.appendingPathComponent("board.sqlite").path
        let fillStart = StorageBench.now()
        let players: [Int64]
        do {
            // The fill gets a connection of its own with a big page cache (it is setup, not a
            // measurement); the queries below use a fresh one with the defaults, as the server.
            let filler = try Database(path: path, synchronous: .normal)
            try Migrator(database: filler, directory: migrations).migrate()
            try filler.execute(sql: "PRAGMA cache_size = -524288")
            players = try StorageBench.fillBoard(filler, scores: scores, random: &random)
        }
        let fillSeconds = StorageBench.seconds(since: fillStart)
        let db = try Database(path: path, synchronous: .full)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("fill scores=\(scores) seconds=\(String(format: "%.1f", fillSeconds)) rows_per_second=\(Int(Double(scores) / fillSeconds)) database_mb=\(bytes / 1_000_000)")

        let boards = SQLiteLeaderboardRepository(database: db)
        let now = StorageBench.boardNow
        // Warm the cache as a running server's would be.
        _ = try boards.top(level: .fast, period: .allTime, limit: 20, now: now)

        var top: [UInt64] = []
        for _ in 0..<queries {
            let start = StorageBench.now()
            let page = try boards.top(level: .fast, period: .allTime, limit: 20, now: now)
            top.append(StorageBench.now() - start)
            precondition(page.entries.count == 20)
        }
        print("top20_first_page \(StorageBench.latency(top, queries))")

        var around: [UInt64] = []
        var deep: [UInt64] = []
        var ranks: [Int] = []
        for _ in 0..<queries {
            let player = players.randomElement(using: &random)!
            var start = StorageBench.now()
            let mine = try boards.aroundMe(playerID: player, level: .fast, period: .allTime, neighbours: 5, now: now)
            around.append(StorageBench.now() - start)
            guard let mine else { preconditionFailure("player \(player) has no score on the filled board") }
            ranks.append(mine.me.rank)
            guard let cursor = mine.nextCursor else { continue }
            start = StorageBench.now()
            let page = try boards.top(level: .fast, period: .allTime, limit: 20, after: cursor, now: now)
            deep.append(StorageBench.now() - start)
            precondition(!page.entries.isEmpty)
        }
        ranks.sort()
        print("around_me_5 \(StorageBench.latency(around, queries)) rank_median=\(ranks[ranks.count / 2])")
        print("top20_page_at_random_depth \(StorageBench.latency(deep, deep.count))")

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
            let start = StorageBench.now()
            _ = try countAhead.query([score, achievedAt, player]) { $0.int(at: 0) }
            counted.append(StorageBench.now() - start)
        }
        print("rank_by_count_of_entries_ahead_only \(StorageBench.latency(counted, counted.count))")

        let onBoard = try StorageBench.recordGames(
            db, count: min(games, 2000), players: players, pool: pool, random: &random, level: .fast)
        print("record_on_full_board synchronous=FULL \(onBoard)")

        if runningGames > 0 {
            let games = pool.map { CheckpointBench.Game(seed: $0.seed, level: $0.level, log: $0.log) }
            for line in try CheckpointBench.run(folder: folder, migrations: migrations, games: runningGames, pool: games) {
                print(line)
            }
        }
        return 0
    }
}

/// The benchmark's workings, kept out of the command's argument handling.
private enum StorageBench {
    struct PlayedGame {
        var seed: UInt64
        var level: SpeedLevel
        var log: InputLog
        var score: Int
        var steps: Int
    }

    /// Every fill score and query uses this moment, so all scores sit on one all-time board
    /// and the day/week boards of `record` stay small.
    static let boardNow = Date(timeIntervalSince1970: 1_768_478_400)  // 2026-01-15T12:00:00Z

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func seconds(since start: UInt64) -> Double { Double(now() - start) / 1e9 }

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

    /// `count` calls of `record`, each its own transaction, for random players and games.
    static func recordGames(
        _ db: Database, count: Int, players: [Int64], pool: [PlayedGame],
        random: inout SystemRandomNumberGenerator, level: SpeedLevel? = nil
    ) throws -> String {
        let repository = SQLiteGameRepository(database: db)
        var latencies: [UInt64] = []
        latencies.reserveCapacity(count)
        let start = now()
        for index in 0..<count {
            let played = pool.randomElement(using: &random)!
            let ended = boardNow.addingTimeInterval(Double(index % 3600))
            let game = NewGame(
                playerID: players.randomElement(using: &random)!, level: level ?? played.level, seed: played.seed,
                inputLog: played.log, score: played.score, steps: played.steps, endReason: .crash,
                startedAt: ended.addingTimeInterval(-60), endedAt: ended, durationMilliseconds: 60_000)
            let before = now()
            try repository.record(game)
            latencies.append(now() - before)
        }
        let total = seconds(since: start)
        return "games=\(count) seconds=\(String(format: "%.2f", total)) games_per_second=\(Int(Double(count) / total)) \(latency(latencies, count))"
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

    static func latency(_ nanoseconds: [UInt64], _ count: Int) -> String {
        guard !nanoseconds.isEmpty else { return "queries=0" }
        let sorted = nanoseconds.sorted()
        func ms(_ value: UInt64) -> String { String(format: "%.3f", Double(value) / 1e6) }
        let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        return "n=\(count) median_ms=\(ms(sorted[sorted.count / 2])) p99_ms=\(ms(p99)) max_ms=\(ms(sorted.last!))"
    }
}
