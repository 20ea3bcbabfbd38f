import Foundation
import RetroRapidRules

/// How a game the server lost by dying is ended (``RunningGameRepository/recoverAll(now:)``),
/// decided once for every backend: re-simulated from its checkpointed log; stored as
/// `server_crash` with the score the replay reaches (or as the `crash` it is when the replay
/// had already crashed); ended at its last checkpoint; its free play given back unless the
/// rules ended it. A log that cannot be re-simulated is stored empty (no steps, score 0).
package struct RunningGameRecovery {
    package let record: RunningGameRecord
    /// What was wrong with its checkpoints, if anything.
    package let problem: String?
    private let log: InputLog
    private let state: GameState
    private let replayed: Bool

    /// Replays `record`'s joined log (``CheckpointLog/applied(to:)``); `problem` is what the
    /// joining found.
    package init(_ record: RunningGameRecord, problem: String?) {
        self.record = record
        do {
            let checkpointed = try InputLog(encoded: record.inputLog)
            state = try Replay.run(seed: record.seed, level: record.level, log: checkpointed, rulesVersion: record.rulesVersion)
            log = checkpointed
            replayed = true
            self.problem = problem
        } catch {
            state = GameState(seed: record.seed, level: record.level)
            log = InputLog()
            replayed = false
            self.problem = [problem, "cannot be re-simulated: \(error)"].compactMap { $0 }.joined(separator: "; ")
        }
    }

    /// The replay had already crashed: the rules ended the game, not the server.
    package var crashed: Bool { replayed && state.isOver }

    /// Its `plays` row is to be deleted: it took a free play and the server, not the rules, ended it.
    package var givesBackPlay: Bool { record.freePlay && !crashed }

    /// The game to store; `playRefunded` says whether the backend deleted its play.
    package func game(playRefunded: Bool) throws -> NewGame {
        // Whole seconds are stored: allow the second the flooring may have cut, as `record` does.
        let endedAt = max(record.checkpointedAt, record.startedAt)
        let span = (UTCCivilTime.seconds(endedAt) - UTCCivilTime.seconds(record.startedAt) + 1) * 1000
        let game = NewGame(
            publicID: record.publicID, playerID: record.playerID, level: record.level, seed: record.seed,
            rulesVersion: record.rulesVersion, inputLog: log, score: state.score, steps: state.step,
            endReason: crashed ? .crash : .serverCrash, practice: record.practice,
            startedAt: record.startedAt, endedAt: endedAt,
            durationMilliseconds: replayed ? Int(min(Int64(record.durationMilliseconds), span)) : 0,
            playRefunded: playRefunded, road: record.road)
        try game.validate()
        return game
    }
}
