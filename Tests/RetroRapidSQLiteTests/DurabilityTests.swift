import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Nothing acknowledged is lost (docs/OPERATIONS.md): a process that stores games the way the server
/// does (`retrorapid crash-writer`: `GameRepository.record`, one transaction per game,
/// `synchronous=FULL`, the id printed only after the commit returned) is killed with SIGKILL in
/// the middle of its stream. The database is reopened and must be intact, hold every game
/// whose id was printed, and hold no half-written game.
///
/// What SIGKILL proves, and what it does not: the process dies at an arbitrary instruction,
/// mid-transaction or mid-commit, without running any cleanup, so SQLite's journal recovery and
/// the all-or-nothing of `record` are exercised for real. The operating system survives, so
/// whatever reached the kernel is kept; losing the machine's power is the case `synchronous=FULL`
/// covers on top (the WAL is fsynced at every commit), and no unit test can cut the power.
/// docs/OPERATIONS.md explains the choice.
@Suite struct DurabilityTests {
    @Test func sigkillMidStreamLosesNoAcknowledgedGameAndLeavesNoHalfWrittenOne() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("durable.sqlite").path
            var acknowledged = Set<Int64>()
            // Several kills on one file: each reopening recovers what the last kill left, and
            // the next writer carries on from there.
            for round in 1...4 {
                let writer = try CrashWriterProcess.start(database: path, in: folder)
                let read = try writer.readAcknowledgements(count: 200 + Int.random(in: 0..<100))
                let killedBySignal = writer.kill()
                let afterKill = writer.remainingAcknowledgements()
                #expect(killedBySignal, "round \(round): the writer was still writing when killed; \(writer.diagnostics)")
                #expect(read.count >= 200, "round \(round): \(writer.diagnostics)")
                acknowledged.formUnion(read)
                acknowledged.formUnion(afterKill)

                let reopened = try Database(path: path)
                let problems = try DurabilityCheck.problems(in: reopened, acknowledged: acknowledged)
                #expect(problems.isEmpty, "round \(round): \(problems.prefix(10).joined(separator: "\n"))")
            }
            #expect(acknowledged.count >= 800)
        }
    }

    /// `synchronous=NORMAL` under WAL skips the fsync at each commit. It still loses nothing to a
    /// process crash (the kernel has the bytes); what it risks is the last commits on power loss
    /// or an OS crash, which is why the server keeps FULL.
    @Test func underSynchronousNormalAProcessCrashLosesNothingEither() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("normal.sqlite").path
            var acknowledged = Set<Int64>()
            for round in 1...2 {
                let writer = try CrashWriterProcess.start(database: path, in: folder, extraArguments: ["--synchronous", "normal"])
                acknowledged.formUnion(try writer.readAcknowledgements(count: 200))
                #expect(writer.kill(), "round \(round): \(writer.diagnostics)")
                acknowledged.formUnion(writer.remainingAcknowledgements())
                let problems = try DurabilityCheck.problems(in: try Database(path: path), acknowledged: acknowledged)
                #expect(problems.isEmpty, "round \(round): \(problems.prefix(10).joined(separator: "\n"))")
            }
        }
    }

    /// The check above can fail: it finds a lost acknowledged game, a game without its
    /// leaderboard rows, a leaderboard row without its game, and counts out of step.
    @Test func theCheckFindsLostAndHalfWrittenGames() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "check.sqlite")
            let player = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Ann", deviceLabel: "", now: Date()).player
            let games = SQLGameRepository(executor: SQLiteExecutor(database: db))
            var ids: [Int64] = []
            for score in [10, 30, 20, 5] {
                let now = Date()
                ids.append(try games.record(NewGame(
                    playerID: player.id, level: .fast, seed: UInt64(score), inputLog: InputLog(steps: 40, moves: []), score: score,
                    steps: 40, endReason: .crash, startedAt: now, endedAt: now, durationMilliseconds: 0)).game.id)
            }
            #expect(try DurabilityCheck.problems(in: db, acknowledged: Set(ids)).isEmpty)

            // An acknowledged game that is not there.
            let lost = try DurabilityCheck.problems(in: db, acknowledged: Set(ids + [9_999]))
            #expect(lost.contains { $0.contains("acknowledged but missing") && $0.contains("9999") }, "\(lost)")

            // A game stored without its leaderboard rows (a higher score than the board's best).
            try db.prepare("""
                INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
                                   started_at, ended_at, duration_ms)
                SELECT player_id, level, seed, rules_version, input_log, 60, steps, end_reason, practice, started_at, ended_at, duration_ms
                FROM games WHERE id = ?
                """).execute([ids[0]])
            let halfGame = try DurabilityCheck.problems(in: db, acknowledged: Set(ids))
            #expect(halfGame.contains { $0.contains("game \(db.lastInsertRowID)") && $0.contains("best") }, "\(halfGame)")
            try db.prepare("DELETE FROM games WHERE id = ?").execute([db.lastInsertRowID])
            #expect(try DurabilityCheck.problems(in: db, acknowledged: Set(ids)).isEmpty)

            // A leaderboard row whose game is gone, and the counts behind ranks out of step.
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.prepare("UPDATE best_scores SET game_id = 424242 WHERE period = 'all'").execute()
            try db.execute(sql: "UPDATE score_counts SET players = players + 1 WHERE period = 'day'")
            let orphan = try DurabilityCheck.problems(in: db, acknowledged: Set(ids))
            #expect(orphan.contains { $0.contains("424242") && $0.contains("no such game") }, "\(orphan)")
            #expect(orphan.contains { $0.contains("score_counts") }, "\(orphan)")
        }
    }
}

// MARK: - The check

/// What must hold in a games database after any crash. Each problem is one sentence.
enum DurabilityCheck {
    static func problems(in db: Database, acknowledged: Set<Int64>) throws -> [String] {
        var problems: [String] = []

        let integrity = try db.prepare("PRAGMA integrity_check").query { $0.string(at: 0) }
        if integrity != ["ok"] { problems.append("PRAGMA integrity_check: \(integrity.prefix(5).joined(separator: "; "))") }
        let dangling = try db.prepare("PRAGMA foreign_key_check").query { "\($0.string(at: 0)) row \($0.int64(at: 1)) → \($0.string(at: 2))" }
        if !dangling.isEmpty { problems.append("PRAGMA foreign_key_check: \(dangling.prefix(5).joined(separator: ", "))") }

        struct Game { var id: Int64; var player: Int64; var level: String; var score: Int; var practice: Bool; var endedAt: String }
        let games = try db.prepare("SELECT id, player_id, level, score, practice, ended_at FROM games").query { row in
            Game(id: row.int64(at: 0), player: row.int64(at: 1), level: row.string(at: 2), score: row.int(at: 3),
                 practice: row.bool(at: 4), endedAt: row.string(at: 5))
        }
        let gamesByID = Dictionary(uniqueKeysWithValues: games.map { ($0.id, $0) })
        let lost = acknowledged.subtracting(gamesByID.keys).sorted()
        if !lost.isEmpty { problems.append("\(lost.count) games acknowledged but missing: \(lost.prefix(20).map(String.init).joined(separator: ", "))") }

        struct Board: Hashable { var level: String; var period: String; var key: String; var player: Int64 }
        struct Best { var score: Int; var achievedAt: String; var gameID: Int64 }
        let bestRows = try db.prepare("SELECT level, period, period_key, player_id, score, achieved_at, game_id FROM best_scores").query { row in
            (Board(level: row.string(at: 0), period: row.string(at: 1), key: row.string(at: 2), player: row.int64(at: 3)),
             Best(score: row.int(at: 4), achievedAt: row.string(at: 5), gameID: row.int64(at: 6)))
        }
        // The primary key makes a board and player unique; a duplicate would be a problem of its own.
        let bests = Dictionary(bestRows, uniquingKeysWith: { first, _ in first })

        /// The boards a game ended at `endedAt` counts on, as `best_scores` names them.
        func boards(_ game: Game) -> [Board]? {
            guard let ended = ISO8601DateFormatter().date(from: game.endedAt) else { return nil }
            return [("day", LeaderboardPeriod.today), ("week", .thisWeek), ("all", .allTime)].map { name, period in
                Board(level: game.level, period: name, key: period.key(containing: ended), player: game.player)
            }
        }

        // Every scoring game is on its three boards, at or below the best kept there.
        for game in games where !game.practice {
            guard let boards = boards(game) else {
                problems.append("game \(game.id) has an unreadable ended_at '\(game.endedAt)'")
                continue
            }
            for board in boards {
                guard let best = bests[board] else {
                    problems.append("game \(game.id) (score \(game.score)) has no best_scores row on \(board.level)/\(board.period)/\(board.key)")
                    continue
                }
                if best.score < game.score {
                    problems.append("game \(game.id) scored \(game.score) but the best kept on \(board.level)/\(board.period)/\(board.key) is \(best.score)")
                }
            }
        }
        // Every best score is one game's, on that game's boards, with its score and time.
        for (board, best) in bests {
            guard let game = gamesByID[best.gameID] else {
                problems.append("best_scores row \(board.level)/\(board.period)/\(board.key) of player \(board.player) points at game \(best.gameID): no such game")
                continue
            }
            if game.practice || game.score != best.score || game.endedAt != best.achievedAt || !(boards(game) ?? []).contains(board) {
                problems.append("best_scores row \(board.level)/\(board.period)/\(board.key) of player \(board.player) (score \(best.score) at \(best.achievedAt)) does not match its game \(game.id) (score \(game.score) at \(game.endedAt)\(game.practice ? ", practice" : ""))")
            }
        }
        // The counts that ranks are computed from agree with the rows.
        struct Count: Hashable { var level: String; var period: String; var key: String; var score: Int }
        var expected: [Count: Int] = [:]
        for (board, best) in bests { expected[Count(level: board.level, period: board.period, key: board.key, score: best.score), default: 0] += 1 }
        let counted = Dictionary(
            try db.prepare("SELECT level, period, period_key, score, players FROM score_counts WHERE players > 0").query { row in
                (Count(level: row.string(at: 0), period: row.string(at: 1), key: row.string(at: 2), score: row.int(at: 3)), row.int(at: 4))
            },
            uniquingKeysWith: { first, _ in first })
        if counted != expected {
            let wrong = Set(counted.keys).union(expected.keys).filter { counted[$0] != expected[$0] }
            problems.append("score_counts disagrees with best_scores on \(wrong.count) scores, e.g. \(wrong.prefix(3).map { "\($0.level)/\($0.period)/\($0.key) score \($0.score): \(counted[$0] ?? 0) counted, \(expected[$0] ?? 0) rows" })")
        }
        return problems
    }
}

// MARK: - The writer process

/// `retrorapid crash-writer` running in the background, its acknowledgements read as they come.
final class CrashWriterProcess {
    let process: Process
    private let output: FileHandle
    private let errorURL: URL
    private var buffer: [UInt8] = []
    private var finished = false
    /// Set by the watchdog when the writer had to be stopped for taking too long.
    private let timedOut = Locked(false)
    /// What the watchdog looks at; emptied once the writer has ended.
    private var watched: Locked<Process?>?

    private init(process: Process, output: FileHandle, errorURL: URL) {
        self.process = process
        self.output = output
        self.errorURL = errorURL
    }

    deinit {
        if process.isRunning { kill() }
    }

    /// Launches the writer on `database` (created and migrated by it), with a watchdog that
    /// kills it after `timeout`, so a stuck writer fails the test instead of hanging it.
    static func start(database: String, in folder: URL, extraArguments: [String] = [], timeout: TimeInterval = 120) throws -> CrashWriterProcess {
        let process = Process()
        process.executableURL = try RetroRapidExecutable.url()
        process.arguments = ["crash-writer", "--database", database, "--migrations", productMigrations.path] + extraArguments
        process.currentDirectoryURL = folder
        process.environment = RetroRapidExecutable.environment([:])
        let pipe = Pipe()
        let errorURL = folder.appendingPathComponent("crash-writer-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: errorURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Only the child may hold the write end, or the pipe would never reach end of file.
        try? pipe.fileHandleForWriting.close()
        let writer = CrashWriterProcess(process: process, output: pipe.fileHandleForReading, errorURL: errorURL)
        // The watchdog asks the Process itself (not a bare pid, which could be reused once the
        // writer is gone) whether it still runs.
        let watched = Locked<Process?>(process)
        writer.watched = watched
        let flag = writer.timedOut
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            watched.withLock { process in
                guard let process, process.isRunning else { return }
                flag.withLock { $0 = true }
                Foundation.kill(process.processIdentifier, SIGKILL)
            }
        }
        return writer
    }

    /// Reads acknowledged ids until `count` more arrived (fewer if the writer ended first).
    func readAcknowledgements(count: Int) throws -> [Int64] {
        var ids: [Int64] = []
        while ids.count < count, let line = nextLine() {
            guard let id = Int64(line) else {
                throw CLIFailure("crash-writer printed '\(line)', not a game id; \(diagnostics)")
            }
            ids.append(id)
        }
        if timedOut.withLock({ $0 }) { Issue.record("crash-writer was stopped by the watchdog; \(diagnostics)") }
        return ids
    }

    /// Sends SIGKILL (if still running) and waits for the end. True when SIGKILL is what ended
    /// it, i.e. it was still writing.
    @discardableResult
    func kill() -> Bool {
        watched?.withLock { process in
            if let process, process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        watched?.withLock { $0 = nil }
        return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// Every whole line already in the pipe after the writer died: acknowledged too.
    func remainingAcknowledgements() -> [Int64] {
        var ids: [Int64] = []
        while let line = nextLine() {
            if let id = Int64(line) { ids.append(id) }
        }
        return ids
    }

    var diagnostics: String {
        let stderr = (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        return "crash-writer stderr: \(stderr.isEmpty ? "(empty)" : stderr)"
    }

    /// The next complete line, or nil at end of file. A last line without its newline was cut
    /// by the kill mid-write and is not an acknowledgement.
    private func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard !finished else { return nil }
            let data = output.availableData
            if data.isEmpty { finished = true } else { buffer += data }
        }
    }

    struct CLIFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
