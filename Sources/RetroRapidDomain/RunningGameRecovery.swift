import Foundation
import RetroRapidRules

/// How a game the server lost by dying is ended (``RunningGameRepository/recoverAll(now:)``,
/// ``RunningGameRepository/recover(publicID:now:)``), decided once for every backend:
/// re-simulated from its checkpointed log; stored as `server_crash` with the score the replay
/// reaches (or as the `crash` it is when the replay had already crashed); ended at its last
/// checkpoint; its free play given back unless the rules ended it or the player already had
/// ``refundsPerPlayerPerDay`` plays of that day given back for crashes. A log that cannot be
/// re-simulated is stored empty (no steps, score 0).
///
/// Why the cap: anyone who finds a way to crash the server could otherwise crash it during
/// every good run, keep the score (which stands, as quitting would keep it) and never pay the
/// play. With the cap, crashing again the same day buys nothing (docs/GAME_RULES.md).
package struct RunningGameRecovery {
    /// The most free plays of one UTC day (the day each was taken) given back to one player
    /// for games the server lost: enough for an honest player caught by a rare crash, and
    /// nothing more for one who crashes the server again and again.
    package static let refundsPerPlayerPerDay = 1

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

    /// It may have its play given back: it took a free play and the server, not the rules, ended it.
    package var mayGiveBackPlay: Bool { record.freePlay && !crashed }

    /// The UTC day whose play it took (its start's), which a refund gives back to.
    package var playDay: UTCDay { UTCDay(containing: record.startedAt) }

    /// Its `plays` row is to be deleted, given how many `server_crash` games of the player
    /// started on ``playDay`` already had their play given back (read in the transaction that
    /// stores this one). - Throws: `StoreError` for a count no database could hold.
    package func givesBackPlay(refundedThatDay: Int64) throws(StoreError) -> Bool {
        guard refundedThatDay >= 0 else {
            throw StoreError.unreadable("a count of refunded games read as \(refundedThatDay)")
        }
        return mayGiveBackPlay && refundedThatDay < Int64(Self.refundsPerPlayerPerDay)
    }

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
