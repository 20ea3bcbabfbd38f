import RetroRapidLWS
import RetroRapidDomain

/// The hub's checkpoints: every `checkpointIntervalMilliseconds` (1 s by default) what changed
/// in each running game since its last checkpoint (its step count, the moves made since) goes
/// to the storage thread, every game in one job and one transaction
/// (`RunningGameRepository.checkpoint`). A crash of the server therefore loses at most that
/// interval of each game: at the next start the game is ended from its checkpoints
/// (`GameRecovery`).
///
/// Cost, bounded: one transaction (one fsync) an interval for the whole server, not one per
/// game; each game that changed appends a row of a few dozen bytes (its new moves), so the
/// disk sees a few new pages a second, not every log rewritten; a game that did not change
/// (paused, waiting for its player) writes nothing; at most one checkpoint is queued or running
/// at a time, so a slow disk makes checkpoints rarer instead of piling them up. Every
/// `checkpointsPerCompaction`-th checkpoint writes every game's whole log instead and the rows
/// before it are deleted, so the table holds about a minute of rows. The service thread only
/// copies the new moves and never waits: the rows are encoded and written on the storage thread.
///
/// Threading rule: service thread (the tick timer and the worker's completion run there).
extension WebSocketHub {
    /// The scheduler id of the checkpoint timer (game ids are positive; -1 is the shutdown's).
    static let checkpointTimerID = -2
    /// A compacting checkpoint after this many: a minute at the default interval.
    static let checkpointsPerCompaction = 60

    var checkpointInterval: Int64 { Int64(limits.checkpointIntervalMilliseconds) * 1000 }

    /// The checkpoint timer is due: hand what changed to the storage thread, then set the
    /// next one.
    func checkpointDue(now: Int64) {
        guard shutdown == nil else { return }  // shutdown stores every game whole; nothing to keep
        scheduler.schedule(Self.checkpointTimerID, at: now + checkpointInterval)
        guard !checkpointInFlight else { return }
        let compacting = checkpointsSinceCompaction + 1 >= Self.checkpointsPerCompaction
        var batch: [GameCheckpoint] = []
        var sizes: [(session: Int, size: GameSession.LogSize)] = []
        for (id, session) in sessions {
            guard let (checkpoint, size) = session.checkpoint(now: now, full: compacting) else { continue }
            batch.append(checkpoint)
            sizes.append((id, size))
        }
        guard !batch.isEmpty || compacting else { return }
        checkpointInFlight = true
        let games = batch
        let saved = sizes
        worker.perform({ storage in
            try storage.runningGames.checkpoint(games, compacting: compacting, now: storage.now)
        }, then: { [self] result in
            checkpointInFlight = false
            switch result {
            case .success:
                checkpointsSinceCompaction = compacting ? 0 : checkpointsSinceCompaction + 1
                metrics.checkpointed(games: saved.count)
                for (id, size) in saved { sessions[id]?.checkpointSaved(size) }
            case .failure(let error):
                // Nothing is marked saved, so the next checkpoint writes these changes again.
                logger.error("could not checkpoint running games", metadata: [
                    "games.count": String(saved.count), "error": "\(error)"])
            }
        })
    }
}
