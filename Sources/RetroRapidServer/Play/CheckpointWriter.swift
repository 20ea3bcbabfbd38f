import RetroRapidDomain
import RetroRapidSupport

/// The checkpoints of running games: every `checkpointIntervalMilliseconds` (1 s by default)
/// each running game saves what changed since its last checkpoint (its step count, the moves
/// made since) on the storage thread (`RunningGameRepository.checkpoint`). A crash of the
/// server therefore loses at most that interval of each game: at the next start the game is
/// ended from its checkpoints (`GameRecovery`).
///
/// A round spans `slicesPerRound` ticks, one every tenth of the interval. A round over more
/// than `gamesPerSlice` matches is written in up to `slicesPerRound` slices on its first
/// ticks, each with the games of its share of the matches (`slice(of:in:)`), one job and one
/// transaction for each storage thread that has games; a smaller one in one slice, as
/// before. Gathering every game in one turn of the service thread and writing them in one
/// transaction made a stall of 10–40 ms at 12,500 games once a second (the storage thread
/// shares the core), most of the step-lateness tail (docs/BENCHMARKS.md, "Checkpoints in
/// slices").
///
/// Cost, bounded: at most `slicesPerRound` transactions an interval for the whole server,
/// not one per game; each game that changed appends a row of a few dozen bytes (its new moves); a game
/// that did not change (paused, waiting for its player) writes nothing; a slice waits until
/// the slice before it is saved, so a slow disk stretches the round instead of piling jobs
/// up. Every `checkpointsPerCompaction`-th round writes every game's whole log instead and,
/// once all its slices are saved, the rows before it are deleted a part at a time, one part
/// a tick beside the next rounds (`compactCheckpoints`), so the table holds about a minute of
/// rows and no part holds a storage thread for longer than a round's slices together do. The
/// service thread only copies the new moves and never waits: the rows are encoded and written
/// on the storage thread.
///
/// Threading rule: owned by the `MatchHost` on the libwebsockets service thread (the step
/// timer calls `writeSlice`; the worker's completions come back there).
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    /// A compacting checkpoint after this many: a minute at the default interval.
    static let checkpointsPerCompaction = 60

    /// Every this many compactions one starts at the table's lowest row instead of where the
    /// one before left no row below: ten minutes at the default interval.
    static let compactionsPerFullSweep = 10

    let worker: DatabaseWorker
    let metrics: WebSocketMetrics
    let logger: Logger
    /// Microseconds between checkpoints.
    let interval: Int64
    /// About how many games one slice holds (`--checkpoint-games-per-slice`, 1,000 by
    /// default): fewer games take fewer slices (a small server keeps one transaction an
    /// interval), more take up to `slicesPerRound`. A thousand games are about 3 ms of one
    /// core to gather and write.
    let gamesPerSlice: Int

    /// The player's session at this seat, if it still runs (set by the `MatchHost`): a
    /// checkpoint's answer marks only those as saved.
    var session: (MatchSeat.Address) -> GameSession? = { _ in nil }

    /// A round is written in at most this many slices, one each tick of `sliceInterval`.
    static let slicesPerRound = 10

    /// Microseconds between two ticks: a round spans `slicesPerRound` of them, whatever
    /// number of slices it writes, so each game is checkpointed once an interval.
    var sliceInterval: Int64 { max(1, interval / Int64(Self.slicesPerRound)) }

    /// Jobs of the current slice still queued or running on the storage threads: the next
    /// slice waits for all of them.
    private var inFlight = 0
    /// The last compacting round's deletion as its last answer left it: a part sent each tick
    /// until it `isFinished`, and then where the next one may start
    /// (`CheckpointCompaction.following`); nil before the first and once a part failed.
    private var compaction: CheckpointCompaction?
    /// A part of `compaction` is queued or running: the next waits for it.
    private var compactionInFlight = false
    /// Counts the compactions begun, so a part's answer moves only its own one on.
    private var compactionNumber = 0
    /// Rounds saved since the last compacting one.
    private var sinceCompaction = 0
    /// The round under way; nil before the first.
    private var round: Round?

    /// One pass over every running game, in `slices` slices written on its first ticks.
    private struct Round {
        /// Every game's whole log, then the older rows go.
        let compacting: Bool
        /// How many slices the matches are spread over (`slice(of:in:)`).
        let slices: Int
        /// The tick to run next; `slicesPerRound` once the round's interval is over.
        var tick = 0
        /// A job of the round failed: it does not count, and a compacting one deletes nothing.
        var failed = false
        /// Compacting: the lowest row id the first slice's jobs saw before writing, below
        /// which every older row of the round's games lies.
        var firstRowID: Int64?
        /// Compacting: the games whose whole log the round has written.
        var covered: Set<String> = []
    }

    init(limits: WebSocketLimits, worker: DatabaseWorker, metrics: WebSocketMetrics, logger: Logger) {
        interval = Int64(limits.checkpointIntervalMilliseconds) * 1000
        gamesPerSlice = max(1, limits.checkpointGamesPerSlice)
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
            try storage.runningGames.checkpointHandedOver(log, now: storage.now)
            return try after(storage)
        }, then: completion)
    }

    /// What one storage thread writes of a slice.
    private struct Share {
        var games: [GameCheckpoint] = []
        var sizes: [(seat: MatchSeat.Address, size: GameSession.LogSize)] = []
    }

    /// Which of `slices` slices a match's games are written in. Ids are handed out one after
    /// another to matches and sessions alike, so a plain remainder could leave slices empty;
    /// Fibonacci hashing spreads any run of ids evenly.
    static func slice(of matchID: Int, in slices: Int) -> Int {
        Int(((UInt64(bitPattern: Int64(matchID)) &* 0x9E37_79B9_7F4A_7C15) >> 32) % UInt64(slices))
    }

    /// How many slices a round of `matches` matches takes, about `gamesPerSlice` in each.
    static func slices(for matches: Int, gamesPerSlice: Int) -> Int {
        min(slicesPerRound, max(1, (matches + gamesPerSlice - 1) / gamesPerSlice))
    }

    /// Called every `sliceInterval`: hands the next slice of the round to the storage threads,
    /// unless the one before is still under way (then the next call tries again, and this
    /// slice takes the changes made meanwhile too, so a slow disk stretches the round).
    ///
    /// Ordering rule: a game's checkpoint goes to its player's lane (`perform(orderedBy:)`
    /// picks the same one), so it runs after the game's start and before its record, never
    /// beside them. With several storage threads a slice is one job per thread that has
    /// games, each its own transaction.
    ///
    /// A compacting round also writes, in its last slice, every game it has not covered yet
    /// (begun, or taken over from another node, after its own slice went by), so that usually
    /// no running game keeps its old rows; then, once every slice is saved, the rows below the
    /// round's first that it made redundant and those of games no longer running are deleted,
    /// a part each tick (`sendCompactionPart()`).
    func writeSlice(_ matches: [Int: Match], now: Int64) {
        sendCompactionPart()
        guard inFlight == 0 else { return }
        if round.map({ $0.tick == Self.slicesPerRound }) ?? true {
            startRound(matches: matches.count)
        }
        guard var round else { return }
        let index = round.tick
        round.tick += 1
        // The round's slices are written on its first ticks; the rest of its interval is idle.
        guard index < round.slices else {
            self.round = round
            return
        }
        let compacting = round.compacting
        let sweep = compacting && index == round.slices - 1
        var shares = Array(repeating: Share(), count: worker.threadCount)
        for (id, match) in matches {
            let inSlice = round.slices == 1 || Self.slice(of: id, in: round.slices) == index
            guard inSlice || sweep else { continue }
            for seat in match.seats {
                guard let session = seat.session else { continue }
                if !inSlice && round.covered.contains(session.gameID) { continue }
                guard let (checkpoint, size) = session.checkpoint(now: now, full: compacting) else { continue }
                if compacting { round.covered.insert(session.gameID) }
                let lane = worker.lane(orderedBy: session.playerID).index
                shares[lane].games.append(checkpoint)
                shares[lane].sizes.append((seat.address, size))
            }
        }
        // Stored before any job is handed over: a completion may change it.
        self.round = round
        var jobs = worker.lanes.filter { !shares[$0.index].games.isEmpty }
        // A compacting round's first slice always reads where the round starts, games or not.
        let marksStart = compacting && index == 0
        if jobs.isEmpty && marksStart { jobs = [worker.serialLane] }
        inFlight = jobs.count
        for lane in jobs {
            let games = shares[lane.index].games
            let saved = shares[lane.index].sizes
            worker.perform(on: lane, { storage -> Int64? in
                let first = marksStart ? try storage.runningGames.nextCheckpointRowID() : nil
                try storage.runningGames.checkpoint(games, compacting: false, now: storage.now)
                return first
            }, then: { [self] result in
                inFlight -= 1
                switch result {
                case .success(let first):
                    if let first {
                        let lowest = min(self.round?.firstRowID ?? first, first)
                        self.round?.firstRowID = lowest
                    }
                    metrics.checkpointed(games: saved.count)
                    for (id, size) in saved { session(id)?.checkpointSaved(size) }
                case .failure(let error):
                    self.round?.failed = true
                    // Nothing is marked saved, so the next checkpoint writes these changes again.
                    logger.error("could not checkpoint running games", metadata: [
                        "games.count": String(saved.count), "error": "\(error)"])
                }
            })
        }
    }

    /// The round before is over (or there was none): starts the next one, sized for `matches`
    /// matches. A compacting round that ended with every slice saved leaves its deletion to
    /// be done a part a tick (in place of any earlier one still under way: this one covers
    /// every row that one would have deleted), starting where the one before left no row
    /// below if it finished, else (and every `compactionsPerFullSweep`-th time) at the
    /// table's lowest row.
    private func startRound(matches: Int) {
        if let round {
            if round.compacting {
                if !round.failed, let first = round.firstRowID {
                    sinceCompaction = 0
                    compactionNumber += 1
                    compaction = Self.compaction(number: compactionNumber, after: compaction, first: first, covered: round.covered,
                                                 rowsPerPart: CheckpointCompaction.rowsPerPart(games: round.covered.count,
                                                                                                gamesPerSlice: gamesPerSlice))
                }
            } else if !round.failed {
                sinceCompaction += 1
            }
        }
        round = Round(compacting: sinceCompaction + 1 >= Self.checkpointsPerCompaction,
                      slices: Self.slices(for: matches, gamesPerSlice: gamesPerSlice))
    }

    /// The next round compacts: writes every game's whole log and then deletes what came
    /// before. For a node whose slices others may have gathered while it stalled.
    func compactNext() {
        sinceCompaction = max(sinceCompaction, Self.checkpointsPerCompaction - 1)
    }

    /// The `number`-th compaction, of a round that began at `first` and covered `covered`:
    /// where `previous` left no row below (`CheckpointCompaction.following`), except every
    /// `compactionsPerFullSweep`-th, which starts at the lowest row whatever the one before
    /// left, since a row it could not see (another node's, not yet committed when a part
    /// looked at its range) may lie below that point.
    static func compaction(number: Int, after previous: CheckpointCompaction?, first: Int64, covered: Set<String>,
                           rowsPerPart: Int) -> CheckpointCompaction {
        if let previous, !number.isMultiple(of: compactionsPerFullSweep) {
            return previous.following(first: first, covered: covered, rowsPerPart: rowsPerPart)
        }
        return CheckpointCompaction(first: first, covered: covered, rowsPerPart: rowsPerPart)
    }

    /// Hands the next part of the pending compaction to the storage thread, unless one is
    /// under way. A part that fails leaves every row it looked at (the next compaction deletes
    /// them) and ends this compaction, and the next round compacts again.
    private func sendCompactionPart() {
        guard let part = compaction, !part.isFinished, !compactionInFlight else { return }
        compactionInFlight = true
        let number = compactionNumber
        worker.perform(on: worker.serialLane, { storage in
            try storage.runningGames.compactCheckpoints(part)
        }, then: { [self] result in
            compactionInFlight = false
            switch result {
            case .success(let rest):
                // A newer compaction replaces this one; only this one's answer moves it on.
                if compactionNumber == number { compaction = rest }
            case .failure(let error):
                if compactionNumber == number { compaction = nil }
                sinceCompaction = max(sinceCompaction, Self.checkpointsPerCompaction - 1)
                logger.error("could not compact the checkpoints", metadata: ["error": "\(error)"])
            }
        })
    }
}
