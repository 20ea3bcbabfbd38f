import RetroRapidDomain
import RetroRapidSupport

/// The checkpoints of running games: every `checkpointIntervalMilliseconds` (1 s by default)
/// the `MatchHost` hands every match here, and what changed in each session since its last
/// checkpoint (its step count, the moves made since) goes to the storage thread, every game in
/// one job and one transaction (`RunningGameRepository.checkpoint`). A crash of the server
/// therefore loses at most that interval of each game: at the next start the game is ended
/// from its checkpoints (`GameRecovery`).
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
/// Threading rule: owned by the `MatchHost` on the libwebsockets service thread (the step
/// timer calls `write`; the worker's completion comes back there).
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    /// A compacting checkpoint after this many: a minute at the default interval.
    static let checkpointsPerCompaction = 60

    let worker: DatabaseWorker
    let metrics: WebSocketMetrics
    let logger: Logger
    /// Microseconds between checkpoints.
    let interval: Int64

    /// The running session with this id, if it still runs (set by the `MatchHost`): a
    /// checkpoint's answer marks only those as saved.
    var session: (Int) -> GameSession? = { _ in nil }

    /// A checkpoint of running games is queued or running on the storage thread.
    private var inFlight = false
    /// Checkpoints saved since the last compacting one.
    private var sinceCompaction = 0

    init(limits: WebSocketLimits, worker: DatabaseWorker, metrics: WebSocketMetrics, logger: Logger) {
        interval = Int64(limits.checkpointIntervalMilliseconds) * 1000
        self.worker = worker
        self.metrics = metrics
        self.logger = logger
    }

    /// One game's whole log, written at once outside the periodic round, then `after` in the
    /// same storage job: how a game handed to another node leaves it everything it needs
    /// (`GameHandoff`). Queued after any periodic checkpoint already handed over, so its row is
    /// the game's last; the session is gone from the host by then, so the next round skips it.
    func writeWhole<T: Sendable>(_ log: GameCheckpoint, then after: @escaping @Sendable (StorageContext) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        precondition(log.movesBefore == 0, "a whole log starts at its first move")
        worker.perform({ storage in
            try storage.runningGames.checkpoint([log], compacting: false, now: storage.now)
            return try after(storage)
        }, then: completion)
    }

    /// Hands what changed in `matches` to the storage thread, unless a checkpoint is still
    /// under way (the next one then takes these changes too).
    func write(_ matches: Dictionary<Int, Match>.Values, now: Int64) {
        guard !inFlight else { return }
        let compacting = sinceCompaction + 1 >= Self.checkpointsPerCompaction
        var batch: [GameCheckpoint] = []
        var sizes: [(session: Int, size: GameSession.LogSize)] = []
        for match in matches {
            let session = match.session
            guard let (checkpoint, size) = session.checkpoint(now: now, full: compacting) else { continue }
            batch.append(checkpoint)
            sizes.append((session.id, size))
        }
        guard !batch.isEmpty || compacting else { return }
        inFlight = true
        let games = batch
        let saved = sizes
        worker.perform({ storage in
            try storage.runningGames.checkpoint(games, compacting: compacting, now: storage.now)
        }, then: { [self] result in
            inFlight = false
            switch result {
            case .success:
                sinceCompaction = compacting ? 0 : sinceCompaction + 1
                metrics.checkpointed(games: saved.count)
                for (id, size) in saved { session(id)?.checkpointSaved(size) }
            case .failure(let error):
                // Nothing is marked saved, so the next checkpoint writes these changes again.
                logger.error("could not checkpoint running games", metadata: [
                    "games.count": String(saved.count), "error": "\(error)"])
            }
        })
    }
}
