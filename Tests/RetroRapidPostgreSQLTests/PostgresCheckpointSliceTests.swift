import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidRules
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

/// A cluster node's round checkpoints as a row per slice (`PostgresCheckpointTable`) and their
/// gathering once the node's process is gone (`PostgresSliceGathering`), on a real server.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresCheckpointSliceTests {
    let start = utc("2026-01-15T10:00:00Z")
    let lease: TimeInterval = 6

    func move(_ step: Int, _ direction: Direction) -> InputLog.Entry { .init(afterStep: step, direction: direction) }

    /// Node "a" running as process `process`, its heartbeat at `seen`.
    func join(_ connection: PostgresConnection, process: String, seen: Date) throws {
        try SQLClusterRepository(executor: connection).join(nodeID: "a", instance: process, now: seen, lease: lease, gameURL: nil)
    }

    /// Process "process-a" running game a1, its one slice of 4 steps and a move written.
    func processWithOneGame(_ connection: PostgresConnection) throws -> SQLRunningGameRepository {
        let player = try addRacePlayer(connection, "p-1")
        let node = SQLRunningGameRepository(postgres: connection, process: "process-a")
        try beginRunningGame(node, "00000000000000a1", player: player, practice: true, at: start)
        try node.checkpoint([GameCheckpoint(publicID: "00000000000000a1", steps: 4, movesBefore: 0, moves: [move(3, .left)],
                                            durationMilliseconds: 3600)], now: start.addingTimeInterval(4))
        return node
    }

    @Test func aProcessWritesARoundAsOneSliceRowThatOnlyAGatheringReads() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let node = SQLRunningGameRepository(postgres: connection, process: "process-a")
            for id in ["00000000000000a1", "00000000000000a2"] { try beginRunningGame(node, id, player: player, practice: true, at: start) }
            try node.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 4, movesBefore: 0, moves: [move(3, .left)], durationMilliseconds: 3600),
                GameCheckpoint(publicID: "00000000000000a2", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1700),
            ], now: start.addingTimeInterval(4))
            try node.checkpoint([
                GameCheckpoint(publicID: "00000000000000a1", steps: 9, movesBefore: 1, moves: [move(5, .right), move(9, .right)],
                               durationMilliseconds: 8600),
            ], now: start.addingTimeInterval(9))

            let slices = try connection.execute("SELECT instance, games, data, at FROM checkpoint_slices ORDER BY id")
                .map { $0.cells.map { $0 ?? "NULL" } }
            #expect(slices == [
                ["process-a", "2", "16:00000000000000a1 4 0 3600 3L\n16:00000000000000a2 2 0 1700 \n", "2026-01-15T10:00:04Z"],
                ["process-a", "1", "16:00000000000000a1 9 1 8600 5R,9R\n", "2026-01-15T10:00:09Z"],
            ])
            #expect(try connection.execute("SELECT count(*) FROM game_checkpoints").first?.int(at: 0) == 0)
            // Read before the gathering: the log as of its last row of its own (none yet).
            let other = SQLRunningGameRepository(postgres: connection, process: "process-b")
            #expect(try other.running(publicID: "00000000000000a1")?.inputLog == "0:")

            // Process a never joined the cluster, so it is gone: its slices become a row per game.
            #expect(try other.gatherCheckpoints(now: start.addingTimeInterval(10), lease: lease) == 2)
            #expect(try connection.execute("SELECT count(*) FROM checkpoint_slices").first?.int(at: 0) == 0)
            let a1 = try #require(try other.running(publicID: "00000000000000a1"))
            #expect(a1.inputLog == "9:3L,5R,9R")
            #expect(a1.durationMilliseconds == 8600 && a1.checkpointedAt == start.addingTimeInterval(9))
            #expect(try other.running(publicID: "00000000000000a2")?.inputLog == "2:")
            #expect(try connection.execute("SELECT public_id, moves_before, moves FROM game_checkpoints ORDER BY public_id")
                .map { $0.cells.map { $0 ?? "NULL" } } == [["00000000000000a1", "0", "3L,5R,9R"], ["00000000000000a2", "0", ""]])
            // A second gathering finds nothing left.
            #expect(try other.gatherCheckpoints(now: start.addingTimeInterval(10), lease: lease) == 0)
        }
    }

    @Test func aLiveProcessIsNotGatheredUntilItsLeaseLapsesOrItsNodeRestarts() throws {
        try withRaceDatabase { _, connection in
            let node = try processWithOneGame(connection)
            try join(connection, process: "process-a", seen: start.addingTimeInterval(4))
            let other = SQLRunningGameRepository(postgres: connection, process: "process-b")

            // Seen within the lease: its slices are its live games'.
            #expect(try other.gatherCheckpoints(now: start.addingTimeInterval(9), lease: lease) == 0)
            // Its own process never gathers its own slices, whatever the clock says.
            #expect(try node.gatherCheckpoints(now: start.addingTimeInterval(60), lease: lease) == 0)
            #expect(try connection.execute("SELECT count(*) FROM checkpoint_slices").first?.int(at: 0) == 1)
            // Its node restarted as another process (once the old one's lease let it): the old
            // process is gone as soon as the new one has joined, whatever the new one's heartbeat.
            try join(connection, process: "process-a2", seen: start.addingTimeInterval(11))
            #expect(try other.gatherCheckpoints(now: start.addingTimeInterval(11), lease: 60) == 1)
            #expect(try other.running(publicID: "00000000000000a1")?.inputLog == "4:3L")
        }
    }

    @Test func aLogHandedOverAfterTheSlicesIsLeftAsItIs() throws {
        try withRaceDatabase { _, connection in
            let node = try processWithOneGame(connection)
            try node.checkpointHandedOver(GameCheckpoint(publicID: "00000000000000a1", steps: 6, movesBefore: 0,
                                                         moves: [move(3, .left), move(5, .left)], durationMilliseconds: 5000),
                                          now: start.addingTimeInterval(6))
            // Another node reads the log handed over; then the first process dies, its slice left.
            let taker = SQLRunningGameRepository(postgres: connection, process: "process-b")
            #expect(try taker.running(publicID: "00000000000000a1")?.inputLog == "6:3L,5L")
            #expect(try taker.gatherCheckpoints(now: start.addingTimeInterval(30), lease: lease) == 0)
            #expect(try taker.running(publicID: "00000000000000a1")?.inputLog == "6:3L,5L")
            #expect(try connection.execute("SELECT count(*) FROM checkpoint_slices").first?.int(at: 0) == 0)
        }
    }

    @Test func aGatheredLogThatBreaksOffBreaksOffWhereItDid() throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let node = SQLRunningGameRepository(postgres: connection, process: "process-a")
            try beginRunningGame(node, "00000000000000a1", player: player, seed: 5, at: start)
            let (early, earlyState) = RunningPlay.dodge(seed: 5, level: .fast, steps: 10)
            try node.checkpoint([GameCheckpoint(publicID: "00000000000000a1", log: early, durationMilliseconds: 6000)],
                                now: start.addingTimeInterval(6))
            // Claims moves the slices never had.
            try node.checkpoint([GameCheckpoint(publicID: "00000000000000a1", steps: 12, movesBefore: early.moves.count + 3,
                                                moves: [], durationMilliseconds: 7000)], now: start.addingTimeInterval(7))
            let other = SQLRunningGameRepository(postgres: connection, process: "process-b")
            #expect(try other.gatherCheckpoints(now: start.addingTimeInterval(30), lease: lease) == 1)
            let recovered = try #require(try other.recover(publicID: "00000000000000a1", now: start.addingTimeInterval(60)))
            #expect(recovered.problem?.contains("break off") == true)
            #expect(recovered.recorded.game.steps == 10 && recovered.recorded.game.score == earlyState.score)
            #expect(recovered.recorded.game.endedAt == start.addingTimeInterval(6))
        }
    }

    @Test func anUnreadableSliceIsSkippedAndTheRestGathered() throws {
        try withRaceDatabase { _, connection in
            _ = try processWithOneGame(connection)
            for data in ["99999999999999999999:x", "16:00000000000000a1 4 0", "400:00000000000000a1 1 0 1 \n"] {
                try connection.execute("INSERT INTO checkpoint_slices (instance, games, data, at) VALUES ('process-a', 1, $1, 'x')", [data])
            }
            let other = SQLRunningGameRepository(postgres: connection, process: "process-b")
            #expect(try other.gatherCheckpoints(now: start.addingTimeInterval(30), lease: lease) == 1)
            #expect(try other.running(publicID: "00000000000000a1")?.inputLog == "4:3L")
            #expect(try connection.execute("SELECT count(*) FROM checkpoint_slices").first?.int(at: 0) == 0)
        }
    }

    @Test(arguments: [1, 3, 1_000]) func aCompactionDeletesOnlyItsOwnProcesssSlicesBelowTheRound(gamesPerPart: Int) throws {
        try withRaceDatabase { _, connection in
            let player = try addRacePlayer(connection, "p-1")
            let node = SQLRunningGameRepository(postgres: connection, process: "process-a")
            let neighbour = SQLRunningGameRepository(postgres: connection, process: "process-b")
            let ids = ["00000000000000a1", "00000000000000a2"]
            for id in ids { try beginRunningGame(node, id, player: player, practice: true, at: start) }
            try beginRunningGame(neighbour, "00000000000000b1", player: player, practice: true, at: start)
            for second in 1...3 {
                try node.checkpoint(ids.map { GameCheckpoint(publicID: $0, steps: second, movesBefore: 0, moves: [],
                                                              durationMilliseconds: second * 1000) },
                                    now: start.addingTimeInterval(Double(second)))
                try neighbour.checkpoint([GameCheckpoint(publicID: "00000000000000b1", steps: second, movesBefore: 0, moves: [],
                                                         durationMilliseconds: second * 1000)], now: start.addingTimeInterval(Double(second)))
            }
            let first = try node.nextCheckpointRowID()
            try node.checkpoint(ids.map { GameCheckpoint(publicID: $0, steps: 4, movesBefore: 0, moves: [], durationMilliseconds: 4000) },
                                now: start.addingTimeInterval(4))
            var compaction = CheckpointCompaction(first: first, covered: Set(ids), rowsPerPart: gamesPerPart)
            var parts = 0
            while !compaction.isFinished {
                compaction = try node.compactCheckpoints(compaction)
                parts += 1
            }
            let left = try connection.execute("SELECT instance, data FROM checkpoint_slices ORDER BY id").map { $0.cells.map { $0 ?? "NULL" } }
            #expect(left == [
                ["process-b", "16:00000000000000b1 1 0 1000 \n"], ["process-b", "16:00000000000000b1 2 0 2000 \n"],
                ["process-b", "16:00000000000000b1 3 0 3000 \n"],
                ["process-a", "16:00000000000000a1 4 0 4000 \n16:00000000000000a2 4 0 4000 \n"],
            ])
            // A slice of two games a part when a part is under two games' lines (one at least).
            #expect(parts >= (gamesPerPart < 2 ? 3 : 1))
        }
    }
}
