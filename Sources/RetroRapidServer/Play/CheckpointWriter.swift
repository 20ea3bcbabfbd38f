import RetroRapidDomain
import RetroRapidSupport

/// The checkpoints of running games: every `checkpointIntervalMilliseconds` (1 s by default)
/// the `MatchHost` hands every match here, and what changed in each session since its last
/// checkpoint (its step count, the moves made since) goes to the storage thread, every game in
/// one job and one transaction (`RunningGameRepository.checkpoint`; with several storage
/// threads, one job for each, `write` says how). A crash of the server
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

    /// The player's session at this seat, if it still runs (set by the `MatchHost`): a
    /// checkpoint's answer marks only those as saved.
    var session: (MatchSeat.Address) -> GameSession? = { _ in nil }

    /// Jobs of the current checkpoint still queued or running on the storage threads: the next
    /// checkpoint waits for all of them.
    private var inFlight = 0
    /// A job of the current checkpoint failed: it does not count towards the next compaction.
    private var roundFailed = false
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
    /// (`GameHandoff`). On the player's lane after any periodic checkpoint of the game already
    /// handed over, so its row is the game's last; the session is gone from the host by then,
    /// so the next round skips it.
    func writeWhole<T: Sendable>(_ log: GameCheckpoint, playerID: Int64,
                                 then after: @escaping @Sendable (StorageContext) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        precondition(log.movesBefore == 0, "a whole log starts at its first move")
        worker.perform(orderedBy: playerID, { storage in
            try storage.runningGames.checkpoint([log], compacting: false, now: storage.now)
            return try after(storage)
        }, then: completion)
    }

    /// What one storage thread writes of a checkpoint.
    private struct Share {
        var games: [GameCheckpoint] = []
        var sizes: [(seat: MatchSeat.Address, size: GameSession.LogSize)] = []
    }

    /// Hands what changed in the player seats of `matches` to the storage threads, unless a checkpoint is still
    /// under way (the next one then takes these changes too).
    ///
    /// Ordering rule: a game's checkpoint goes to its player's lane (`perform(orderedBy:)`
    /// picks the same one), so it runs after the game's start and before its record, never
    /// beside them. With several storage threads the checkpoint is one job per thread that has
    /// games, each its own transaction; a compacting share deletes only the rows of its own
    /// games and of games no longer running (`RunningGameRepository.checkpoint`), so the shares
    /// do not undo each other. With one thread it is one job for every game, as it always was.
    func write(_ matches: Dictionary<Int, Match>.Values, now: Int64) {
        guard inFlight == 0 else { return }
        let compacting = sinceCompaction + 1 >= Self.checkpointsPerCompaction
        var shares = Array(repeating: Share(), count: worker.threadCount)
        for match in matches {
            for seat in match.seats {
                guard let session = seat.session,
                      let (checkpoint, size) = session.checkpoint(now: now, full: compacting) else { continue }
                let lane = worker.lane(orderedBy: session.playerID).index
                shares[lane].games.append(checkpoint)
                shares[lane].sizes.append((seat.address, size))
            }
        }
        var jobs = worker.lanes.filter { !shares[$0.index].games.isEmpty }
        if jobs.isEmpty {
            guard compacting else { return }
            // Nothing changed, yet the rows of ended games still go.
            jobs = [worker.serialLane]
        }
        inFlight = jobs.count
        roundFailed = false
        for lane in jobs {
            let games = shares[lane.index].games
            let saved = shares[lane.index].sizes
            worker.perform(on: lane, { storage in
                try storage.runningGames.checkpoint(games, compacting: compacting, now: storage.now)
            }, then: { [self] result in
                inFlight -= 1
                switch result {
                case .success:
                    if inFlight == 0 && !roundFailed { sinceCompaction = compacting ? 0 : sinceCompaction + 1 }
                    metrics.checkpointed(games: saved.count)
                    for (id, size) in saved { session(id)?.checkpointSaved(size) }
                case .failure(let error):
                    roundFailed = true
                    // Nothing is marked saved, so the next checkpoint writes these changes again.
                    logger.error("could not checkpoint running games", metadata: [
                        "games.count": String(saved.count), "error": "\(error)"])
                }
            })
        }
    }
}
