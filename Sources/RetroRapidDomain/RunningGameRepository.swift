import Foundation

/// Games while they run, so a crash of the server does not lose them. The server calls
/// ``begin(_:)`` when a game starts (the game and the play it consumes in one write),
/// ``checkpoint(_:compacting:now:)`` once an interval for every game, and
/// ``GameRepository/record(_:)`` ends the running game when it stores the finished one.
/// A running game left at start-up is one the server lost by dying: ``recoverAll(now:)``
/// ends each one from its checkpoints (docs/OPERATIONS.md).
public protocol RunningGameRepository {
    /// Starts a game: consumes a free play unless practice or unlimited, and returns the quota
    /// after it (nil for practice). - Throws: ``QuotaExhaustedError``, `StoreError`.
    @discardableResult
    func begin(_ game: RunningGameStart) throws -> QuotaStatus?

    /// Forgets a running game that never really started, giving its play back; false when
    /// there was none.
    @discardableResult
    func cancel(publicID: String) throws -> Bool

    /// Appends what changed in each game since its last checkpoint, all in one write.
    func checkpoint(_ batch: [GameCheckpoint], compacting: Bool, now: Date) throws

    /// Appends one game's whole log (`movesBefore` 0) as a row any node reads at once: how a
    /// game handed to another node leaves it everything it needs.
    func checkpointHandedOver(_ log: GameCheckpoint, now: Date) throws

    /// Makes readable the checkpoints of every process gone from the cluster: its node not
    /// seen for `lease` before `now`, left, or restarted as another process. PostgreSQL keeps a
    /// round's checkpoints as a row per slice of a node's games, which only this reads; a node
    /// calls it after claiming a game, before reading the game's log. Returns how many games'
    /// logs it wrote (0 on SQLite, which keeps a row per game).
    @discardableResult
    func gatherCheckpoints(now: Date, lease: TimeInterval) throws -> Int

    /// Where a compacting round starts: every checkpoint row committed so far has a lower id,
    /// every row appended after this call a higher or equal one.
    func nextCheckpointRowID() throws -> Int64

    /// One part of ending a compacting round written in several transactions
    /// (`CheckpointWriter`): looks at the next `compaction.rowsPerPart` ids below
    /// `compaction.first` and deletes the rows among them of a game in `covered` (a later row
    /// holds its whole log) or of a game no longer running; a running game outside `covered`
    /// keeps all its rows. Returns the compaction moved on (`isFinished` once every id below
    /// `first` has been looked at, where a part of a finished one changes nothing): each part
    /// is its own short transaction, so no part holds a storage thread for long.
    func compactCheckpoints(_ compaction: CheckpointCompaction) throws -> CheckpointCompaction

    /// Every running game with the log its checkpoints hold. Where a cluster node keeps its
    /// rounds as slices of its process (PostgreSQL), a game a live process runs is read as
    /// of its last log handed over or gathered: the node has the rest in memory, and
    /// ``gatherCheckpoints(now:lease:)`` reads a gone process's slices.
    func running() throws -> [RunningGameRecord]

    func running(playerID: Int64) throws -> [RunningGameRecord]

    func running(publicID: String) throws -> RunningGameRecord?

    /// Ends every running game from its checkpoints and stores it as a finished game, each by
    /// the rules of ``RunningGameRecovery`` (its play given back within the daily cap), in one
    /// transaction.
    func recoverAll(now: Date) throws -> [RecoveredGame]

    /// Ends one running game the same way, in one transaction with the refund it decides (a
    /// cluster's sweep, for a game whose node died): nil when it no longer runs.
    func recover(publicID: String, now: Date) throws -> RecoveredGame?
}

extension RunningGameRepository {
    public func checkpoint(_ batch: [GameCheckpoint], now: Date) throws {
        try checkpoint(batch, compacting: false, now: now)
    }
}
