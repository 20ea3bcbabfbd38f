import Foundation
import RetroRapidRules

/// `bench-storage`'s checkpoint figures, the same on every backend: what a node's storage
/// thread spends keeping `games` running games recoverable (docs/OPERATIONS.md, "A crash of the
/// server"). Each backend makes the store and the players; this plays the workload through the
/// repository interface.
///
/// Each game replays a real game's log (`pool`) from a random point, two steps a second (about
/// Fast's pace), and every simulated second one `RunningGameRepository.checkpoint` appends what
/// changed in every game; every 60th is the compacting one, every game's whole log, written as
/// the server writes it, in slices of about 1,000 games (at most 10), each slice timed alone;
/// then the rows it made redundant are deleted in parts as the server deletes them
/// (``CheckpointCompaction/rowsPerPart(games:gamesPerSlice:)``, the second compaction starting
/// where the first left no row below), each part timed alone. A
/// plain round is timed whole: the server writes it in the same slices, so a compacting
/// slice or a part that takes less than a plain round holds a storage thread for less than a
/// round does. No sleeping: the checkpoints run back to back, each timed alone. Where the
/// store keeps a node's rounds as slices (PostgreSQL), another node's repository gathers them
/// into a log per game as a node taking the games over does, timed once a second before the
/// last compaction (when they hold the most). Then `recoverAll` ends them all as a restart
/// after a crash would.
public enum CheckpointBenchmark {
    public typealias Game = (seed: UInt64, level: SpeedLevel, log: InputLog)

    static let simulatedSeconds = 120
    static let stepsPerSecond = 2

    /// - Parameters:
    ///   - players: players with unlimited play, so the starts consume no free play and the
    ///     recovery still offers every score to the leaderboards.
    ///   - survivor: another process's repository on the same store, which gathers this one's
    ///     slices (``RunningGameRepository/gatherCheckpoints(now:lease:)``) and ends the games;
    ///     nil where there are no slices (SQLite).
    ///   - checkpointRows: how many checkpoint rows the store holds now (of both tables).
    ///   - logPosition: where the server's write-ahead log is now, in bytes, where the store has
    ///     one (PostgreSQL): what a plain round adds to it is reported, a count that the machine's
    ///     other work does not move as it moves times.
    /// - Returns: the report's lines.
    public static func run(_ repository: any RunningGameRepository, survivor: (any RunningGameRepository)? = nil,
                           players: [Int64], games: Int, pool: [Game],
                           checkpointRows: () throws -> Int, logPosition: (() throws -> Int64)? = nil) throws -> [String] {
        let start = Date(timeIntervalSince1970: 1_768_478_400)  // 2026-01-15T12:00:00Z
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
        var parts: [UInt64] = []
        var firstParts: [UInt64] = []
        var logBytes: [UInt64] = []
        let rowsPerPart = CheckpointCompaction.rowsPerPart(games: games, gamesPerSlice: CheckpointCompaction.defaultGamesPerSlice)
        var rows = 0
        var previous: CheckpointCompaction?
        var gathering: String?
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
            let now = start.addingTimeInterval(Double(second))
            // As if the node died just before its next compaction, when its slices hold the
            // most: whole logs and 59 rounds after them. The run goes on from the gathered rows.
            if let survivor, second == simulatedSeconds - 1 {
                let peakBefore = peakResidentMegabytes()
                let began = ContinuousClock.now
                let gathered = try survivor.gatherCheckpoints(now: now, lease: 6)
                gathering = "gather_after_death games=\(gathered) seconds=\(String(format: "%.2f", Double(nanoseconds(ContinuousClock.now - began)) / 1e9))"
                    + " peak_rss_mb=\(peakBefore)->\(peakResidentMegabytes())"
            }
            guard compact else {
                let logBefore = try logPosition?()
                let began = ContinuousClock.now
                try repository.checkpoint(batch, compacting: false, now: now)
                plain.append(nanoseconds(ContinuousClock.now - began))
                if let logBefore, let logAfter = try logPosition?() { logBytes.append(UInt64(max(0, logAfter - logBefore))) }
                continue
            }
            let first = try repository.nextCheckpointRowID()
            let slices = min(10, max(1, (batch.count + CheckpointCompaction.defaultGamesPerSlice - 1) / CheckpointCompaction.defaultGamesPerSlice))
            for slice in 0..<slices {
                let share = Array(batch[(batch.count * slice / slices)..<(batch.count * (slice + 1) / slices)])
                let began = ContinuousClock.now
                try repository.checkpoint(share, compacting: false, now: now)
                compacting.append(nanoseconds(ContinuousClock.now - began))
            }
            // As the server does: each compaction starts where the one before left no row below.
            let covered = Set(batch.map(\.publicID))
            var part = previous.map { $0.following(first: first, covered: covered, rowsPerPart: rowsPerPart) }
                ?? CheckpointCompaction(first: first, covered: covered, rowsPerPart: rowsPerPart)
            var isFirstPart = true
            while !part.isFinished {
                let began = ContinuousClock.now
                part = try repository.compactCheckpoints(part)
                let took = nanoseconds(ContinuousClock.now - began)
                if isFirstPart { firstParts.append(took) } else { parts.append(took) }
                isFirstPart = false
            }
            previous = part
        }
        let left = try checkpointRows()
        let ended = start.addingTimeInterval(Double(simulatedSeconds + 60))
        try survivor?.gatherCheckpoints(now: ended, lease: 6)
        let began = ContinuousClock.now
        let recovered = try (survivor ?? repository).recoverAll(now: ended)
        let recovery = Double(nanoseconds(ContinuousClock.now - began)) / 1e9
        let log = logBytes.sorted()
        return [
            "checkpoint running_games=\(games) rows_per_second=\(rows / simulatedSeconds) \(latency(plain))"
                + (log.isEmpty ? "" : " wal_bytes_median=\(log[log.count / 2])"),
            "checkpoint_compacting_slice \(latency(compacting)) rows_left=\(left)",
            // The first part of each compaction apart: the first compaction's finds the table's
            // lowest id, a later one's starts where the one before left no row below.
            "compaction_part rows_per_part=\(rowsPerPart) \(latency(parts)) first_parts_max_ms=\(String(format: "%.1f", Double(firstParts.max() ?? 0) / 1e6))",
            "recover_after_crash games=\(recovered.count) seconds=\(String(format: "%.2f", recovery))",
        ] + (gathering.map { [$0] } ?? [])
    }

    /// The process's peak resident memory so far (`VmHWM`), in MB; 0 where /proc has none.
    private static func peakResidentMegabytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }

    private static func latency(_ nanoseconds: [UInt64]) -> String {
        let sorted = nanoseconds.sorted()
        guard let last = sorted.last else { return "n=0" }
        func ms(_ value: UInt64) -> String { String(format: "%.1f", Double(value) / 1e6) }
        return "n=\(sorted.count) median_ms=\(ms(sorted[sorted.count / 2])) p99_ms=\(ms(sorted[sorted.count * 99 / 100])) max_ms=\(ms(last))"
    }
}
