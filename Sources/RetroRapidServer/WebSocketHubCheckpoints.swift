import RetroRapidLWS
import RetroRapidStorage

/// The hub's checkpoints: every `checkpointIntervalMilliseconds` (1 s by default) the input
/// log of each game that changed since its last checkpoint goes to the storage thread, all of
/// them in one job and one transaction (`RunningGameRepository.checkpoint`), so a crash of the
/// server loses at most that interval of each game: at the next start the game is ended from
/// its last checkpoint (`GameRecovery`).
///
/// Cost, bounded: one transaction (one fsync) an interval for the whole server, not one per
/// game; a game that did not change (paused, waiting for its player) is not written; at most
/// one checkpoint is queued or running at a time, so a slow disk makes checkpoints rarer
/// instead of piling them up. The service thread only copies each log (an array shared until
/// the game's next move) and never waits: the rows are encoded and written on the storage thread.
///
/// Threading rule: service thread (the tick timer and the worker's completion run there).
extension WebSocketHub {
    /// The scheduler id of the checkpoint timer (game ids are positive; -1 is the shutdown's).
    static let checkpointTimerID = -2

    var checkpointInterval: Int64 { Int64(limits.checkpointIntervalMilliseconds) * 1000 }

    /// The checkpoint timer is due: hand the changed games to the storage thread, then set the
    /// next one.
    func checkpointDue(now: Int64) {
        guard shutdown == nil else { return }  // shutdown stores every game; nothing to keep
        scheduler.schedule(Self.checkpointTimerID, at: now + checkpointInterval)
        guard !checkpointInFlight else { return }
        var batch: [GameCheckpoint] = []
        var sizes: [(session: Int, size: GameSession.LogSize)] = []
        for (id, session) in sessions {
            guard let (checkpoint, size) = session.checkpoint(now: now) else { continue }
            batch.append(checkpoint)
            sizes.append((id, size))
        }
        guard !batch.isEmpty else { return }
        checkpointInFlight = true
        let games = batch
        let saved = sizes
        worker.perform({ storage in
            try storage.runningGames.checkpoint(games, now: storage.now)
        }, then: { [self] result in
            checkpointInFlight = false
            switch result {
            case .success:
                metrics.checkpointed(games: saved.count)
                for (id, size) in saved { sessions[id]?.checkpointSaved(size) }
            case .failure(let error):
                // Nothing is marked saved, so the next interval writes these games again.
                logger.error("could not checkpoint running games", metadata: [
                    "games.count": String(saved.count), "error": "\(error)"])
            }
        })
    }
}
