import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Real games for the checkpoints of running games: a cue follower that stops before the end,
/// and a player that never moves.
public enum RunningPlay {
    /// Follows the safe-lane cue for `steps` steps; the game is still running after them.
    public static func dodge(seed: UInt64, level: SpeedLevel, steps: Int) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        var moves: [InputLog.Entry] = []
        while state.step < steps, !state.isOver {
            if !state.safeLanes.contains(state.lane), !state.safeLanes.isEmpty {
                let direction: Direction = state.safeLanes.rawValue < LaneSet(lane: state.lane).rawValue ? .left : .right
                moves.append(InputLog.Entry(afterStep: state.step, direction: direction))
                state.move(direction, into: &sink)
            }
            state.advance(into: &sink)
        }
        return (InputLog(steps: state.step, moves: moves), state)
    }

    /// Never moves: the first car in its lane ends it.
    public static func crash(seed: UInt64, level: SpeedLevel) -> (InputLog, GameState) {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        while !state.isOver { state.advance(into: &sink) }
        return (InputLog(steps: state.step, moves: []), state)
    }
}

/// Starts a running game through the interface, as the server's `start` does.
@discardableResult
public func beginRunningGame(_ repository: any RunningGameRepository, _ id: String, player: Int64, seed: UInt64 = 7,
                             level: SpeedLevel = .fast, practice: Bool = false, at startedAt: Date) throws -> QuotaStatus? {
    try repository.begin(RunningGameStart(publicID: id, playerID: player, level: level, seed: seed, practice: practice,
                                          startedAt: startedAt))
}

/// The compaction scenario both storage test targets check (the contract by what the
/// interface returns, SQLite by the rows left): three practice games checkpointed, one of
/// them again, one (a3) ended and stored, then a compacting checkpoint of a1's full log at
/// `start` + 3 s. a2 stays running with its first checkpoint only (its save failed).
public func checkpointThreeGamesThenCompact(runningGames repository: any RunningGameRepository, games: any GameRepository,
                                            player: Int64, start: Date) throws {
    let move = try beginThreeGamesAndCheckpointEach(repository, player: player, start: start)
    try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a1", steps: 6, movesBefore: 1,
                                              moves: [.init(afterStep: 4, direction: .right)], durationMilliseconds: 2)],
                              now: start.addingTimeInterval(2))
    var ended = scoredGame(player: player, score: 0, endedAt: start.addingTimeInterval(3))
    ended.publicID = "00000000000000a3"
    ended.practice = true
    try games.record(ended)
    try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a1", log: InputLog(steps: 7, moves: [
        move, .init(afterStep: 4, direction: .right)]), durationMilliseconds: 3)], compacting: true, now: start.addingTimeInterval(3))
}

/// The same games, compacted the way the server does it, in a round of two slices
/// (`CheckpointWriter`): the round starts at `nextCheckpointRowID()`, the first slice writes
/// a1's full log, a2 appends a row without being covered (its save failed in the round), a4
/// begins and the second slice writes its whole log, then `compactCheckpoints` deletes what
/// the round made redundant, `rowsPerPart` rows a part. Left: a2's two rows, a1's and a4's
/// full logs.
public func checkpointThreeGamesThenCompactInSlices(runningGames repository: any RunningGameRepository,
                                                    games: any GameRepository, player: Int64, start: Date,
                                                    rowsPerPart: Int = 1_000) throws {
    let move = try beginThreeGamesAndCheckpointEach(repository, player: player, start: start)
    var ended = scoredGame(player: player, score: 0, endedAt: start.addingTimeInterval(2))
    ended.publicID = "00000000000000a3"
    ended.practice = true
    try games.record(ended)
    let first = try repository.nextCheckpointRowID()
    try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a1", log: InputLog(steps: 7, moves: [
        move, .init(afterStep: 4, direction: .right)]), durationMilliseconds: 3)], now: start.addingTimeInterval(3))
    try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a2", steps: 4, movesBefore: 0, moves: [],
                                              durationMilliseconds: 3)], now: start.addingTimeInterval(3))
    try beginRunningGame(repository, "00000000000000a4", player: player, practice: true, at: start.addingTimeInterval(3))
    try repository.checkpoint([GameCheckpoint(publicID: "00000000000000a4", steps: 1, movesBefore: 0, moves: [],
                                              durationMilliseconds: 1)], now: start.addingTimeInterval(4))
    try compactInParts(repository, CheckpointCompaction(first: first, covered: ["00000000000000a1", "00000000000000a4"], rowsPerPart: rowsPerPart))
}

/// Runs `compaction` part after part until nothing is left, as `CheckpointWriter` does a tick
/// at a time; returns how many parts it took.
@discardableResult
public func compactInParts(_ repository: any RunningGameRepository, _ compaction: CheckpointCompaction) throws -> Int {
    try compactToTheEnd(repository, compaction).parts
}

/// ``compactInParts(_:_:)``, also returning the compaction as its last part left it.
public func compactToTheEnd(_ repository: any RunningGameRepository,
                            _ compaction: CheckpointCompaction) throws -> (parts: Int, finished: CheckpointCompaction) {
    var parts = 0
    var part = compaction
    repeat {
        part = try repository.compactCheckpoints(part)
        parts += 1
    } while !part.isFinished
    return (parts, part)
}

/// Both compaction scenarios' start: practice games a1, a2 and a3 begun at `start`, each
/// checkpointed once at `start` + 1 s (a1 with one move, which it returns).
private func beginThreeGamesAndCheckpointEach(_ repository: any RunningGameRepository, player: Int64,
                                              start: Date) throws -> InputLog.Entry {
    for id in ["00000000000000a1", "00000000000000a2", "00000000000000a3"] {
        try beginRunningGame(repository, id, player: player, practice: true, at: start)
    }
    let move = InputLog.Entry(afterStep: 1, direction: .left)
    try repository.checkpoint([
        GameCheckpoint(publicID: "00000000000000a1", steps: 3, movesBefore: 0, moves: [move], durationMilliseconds: 1),
        GameCheckpoint(publicID: "00000000000000a2", steps: 2, movesBefore: 0, moves: [], durationMilliseconds: 1),
        GameCheckpoint(publicID: "00000000000000a3", steps: 5, movesBefore: 0, moves: [], durationMilliseconds: 1),
    ], now: start.addingTimeInterval(1))
    return move
}
