import Foundation
import RetroRapidLoad
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Testing
@testable import RetroRapidServer
import RetroRapidSQL

/// A whole server with four storage threads on a real SQLite file, playing real games over real
/// WebSocket connections (`retrorapid loadtest`'s engine) with a checkpoint every 100 ms (a
/// compacting one among them), then stopping. Triggers of the test's own in the database watch
/// every job as it commits, so what is checked is what the storage threads did, in the order
/// they did it, not a timing.
@Suite("Storage threads with real games", .serialized)
struct StorageThreadsEndToEndTests {
    /// Every game begun, and how it left `running_games` (recorded, or its start cancelled);
    /// every checkpoint row written for a game that was not running then
    /// (before its start, or after its record): the ordering a game's jobs must keep; and every
    /// row a compaction deleted, marked lost when its game was running and no newer whole log
    /// of it was there to replace it: a share of a compacting checkpoint undoing another's.
    static let watch = """
        CREATE TABLE test_begun (public_id TEXT NOT NULL, player_id INTEGER NOT NULL);
        CREATE TABLE test_deleted (public_id TEXT NOT NULL, lost INTEGER NOT NULL);
        CREATE TRIGGER test_watch_compaction AFTER DELETE ON game_checkpoints
        BEGIN
            INSERT INTO test_deleted SELECT OLD.public_id,
                EXISTS (SELECT 1 FROM running_games WHERE public_id = OLD.public_id)
                AND NOT EXISTS (SELECT 1 FROM game_checkpoints WHERE public_id = OLD.public_id AND moves_before = 0 AND id > OLD.id);
        END;
        CREATE TABLE test_checkpointed (public_id TEXT NOT NULL);
        CREATE TABLE test_strays (public_id TEXT NOT NULL, recorded INTEGER NOT NULL);
        CREATE TRIGGER test_watch_begin AFTER INSERT ON running_games
        BEGIN INSERT INTO test_begun VALUES (NEW.public_id, NEW.player_id); END;
        CREATE TABLE test_left (public_id TEXT NOT NULL, recorded INTEGER NOT NULL);
        CREATE TRIGGER test_watch_leave AFTER DELETE ON running_games
        BEGIN INSERT INTO test_left SELECT OLD.public_id, EXISTS (SELECT 1 FROM games WHERE public_id = OLD.public_id); END;
        CREATE TRIGGER test_watch_checkpoint AFTER INSERT ON game_checkpoints
        BEGIN
            INSERT INTO test_checkpointed VALUES (NEW.public_id);
            INSERT INTO test_strays SELECT NEW.public_id, EXISTS (SELECT 1 FROM games WHERE public_id = NEW.public_id)
                WHERE NOT EXISTS (SELECT 1 FROM running_games WHERE public_id = NEW.public_id);
        END;
        """

    /// The storage threads' clock, read once in nearly every job: on each thread it costs a
    /// different wait (none to 80 ms), as round trips to a database server would, so the
    /// threads run at different speeds and a job sent to the wrong one would overtake or fall
    /// behind the game's others.
    static let unevenClock: @Sendable () -> Date = {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        let delays = ["rr-storage\n": 80_000, "rr-storage-1\n": 0, "rr-storage-2\n": 5_000, "rr-storage-3\n": 20_000]
        if let delay = delays[name], delay > 0 { usleep(useconds_t(delay)) }
        return Date()
    }

    @Test func everyGameIsRecordedOnceAndNoCheckpointFallsOutsideItsGame() throws {
        try playThenStop(storageThreads: 4) { options in
            options.clock = Self.unevenClock
        }
    }

    /// The same with each round in six slices (two games each) on two threads: the rounds'
    /// slices, the compacting round's start, its last slice's sweep and its one deletion all
    /// keep every rule above. No slow clock here, so that 60 rounds fit the run.
    @Test func checkpointsInSlicesKeepEveryRule() throws {
        try playThenStop(storageThreads: 2) { options in
            options.configuration.checkpointGamesPerSlice = 2
        }
    }

    /// Twelve players play and crash over and over with a checkpoint every 100 ms, then the
    /// server stops; the checks read what the triggers in `watch` saw.
    func playThenStop(storageThreads: Int, _ configure: (inout GameServer.Options) -> Void) throws {
        let server = try RunningGameServer { options in
            options.configuration.storageThreads = storageThreads
            options.configuration.checkpointIntervalMilliseconds = 100
            configure(&options)
        }
        #expect(server.server.worker.threadCount == storageThreads)
        let database = try server.database()
        try database.execute(sql: Self.watch)

        // Players with unlimited play, as `retrorapid seed-players` makes them: their row ids
        // count up, so they fall on every storage thread.
        let players = SQLPlayerRepository(executor: SQLiteExecutor(database: database))
        let entitlements = SQLEntitlementRepository(executor: SQLiteExecutor(database: database))
        let tokens = try (1...12).map { number in
            let (player, token) = try players.createPlayer(displayName: "Lane \(number)", deviceLabel: "test", now: Date())
            try entitlements.grantUnlimited(playerID: player.id, source: .operator, reference: "test", now: Date())
            return token
        }
        var options = LoadTestOptions()
        options.port = server.port
        options.tokens = tokens
        options.connections = tokens.count
        options.level = "rapid"
        options.rampPerSecond = 200
        options.settleSeconds = 1
        // Long enough for 60 checkpoints (a compacting one) when the slow thread holds each
        // round back to 200 ms: with 7 s, a loaded machine ran fewer in about 1 run of 5.
        options.holdSeconds = 12
        options.sourceAddresses = ["127.0.0.2", "127.0.0.3"]
        // Every needed move missed: games crash within a few steps and start again, so games
        // start, checkpoint and end all through the run; lane changes make moves to checkpoint.
        options.behaviour.missChance = 1
        options.behaviour.wanderChance = 0.6
        let report = try LoadGenerator(options: options).run()
        #expect(report.statistics.serverErrors.isEmpty, "errors: \(report.statistics.serverErrors)")
        #expect(report.statistics.gamesEnded > 0)

        // The stop records every game still running (those the clients left waiting), and
        // cancels every start its storage thread answered after the stop began (the clients
        // stop sending just before it, so a start can still be on a slow thread then).
        server.server.stop()

        let begun = Set(try database.prepare("SELECT public_id FROM test_begun").query { $0.string(at: 0) })
        let recorded = try database.prepare("SELECT public_id FROM games").query { $0.string(at: 0) }
        let left = try database.prepare("SELECT public_id, recorded FROM test_left").query { ($0.string(at: 0), $0.int(at: 1) == 1) }
        let cancelled = Set(left.filter { !$0.1 }.map(\.0))
        #expect(begun.count >= report.statistics.gamesStarted && begun.count > tokens.count, "games restarted after crashing: \(begun.count) begun, \(report.statistics.gamesStarted) started, \(report.statistics.gamesEnded) ended, \(recorded.count) recorded, \(cancelled.count) cancelled")
        #expect(left.count == begun.count && Set(left.map(\.0)) == begun, "every game begun leaves running_games once")
        #expect(Set(recorded) == Set(left.filter(\.1).map(\.0)) && Set(recorded).isDisjoint(with: cancelled),
                "every game begun is recorded or cancelled, not both: \(cancelled) cancelled")
        #expect(recorded.count == Set(recorded).count, "and recorded once")
        #expect(recorded.count >= report.statistics.gamesStarted, "every game a client saw start is recorded")
        #expect(try server.count("running_games") == 0)
        // A start is cancelled only when it was still on its storage thread as the stop began.
        let notice = server.logs.records.first { $0.message == "ending every game for shutdown" }
        #expect(notice?.metadata["games.starting"] == String(cancelled.count), "\(cancelled.count) cancelled: \(notice.map { "\($0.metadata)" } ?? "no shutdown notice")")
        let checkpointed = Set(try database.prepare("SELECT public_id FROM test_checkpointed").query { $0.string(at: 0) })
        #expect(!checkpointed.isEmpty && checkpointed.isSubset(of: begun) && checkpointed.isDisjoint(with: cancelled))
        // Checkpoints came from players on several storage threads.
        let lanes = Set(try database.prepare(
            "SELECT DISTINCT player_id FROM test_begun WHERE public_id IN (SELECT public_id FROM test_checkpointed)"
        ).query { server.server.worker.lane(orderedBy: $0.int64(at: 0)).index })
        #expect(lanes.count > 1)
        let strays = try database.prepare("SELECT public_id, recorded FROM test_strays").query { "\($0.string(at: 0)) recorded: \($0.int(at: 1))" }
        #expect(strays.isEmpty, "checkpoint rows written while their game was not running: \(strays)")
        // At least one compacting checkpoint ran (every 60th: 6 s of play at 100 ms, a round
        // waiting for the slowest thread's share), and its shares deleted no row a running
        // game still needed.
        let deleted = try database.prepare("SELECT count(*), coalesce(sum(lost), 0) FROM test_deleted").query { ($0.int(at: 0), $0.int(at: 1)) }.first
        #expect((deleted?.0 ?? 0) > 0, "no compaction ran")
        #expect(deleted?.1 == 0, "rows of running games deleted with nothing to replace them")
        let failures = server.logs.records.filter { $0.level >= .warning && $0.message.contains("could not") }
        #expect(failures.isEmpty, "\(failures.map(\.message))")
    }
}
