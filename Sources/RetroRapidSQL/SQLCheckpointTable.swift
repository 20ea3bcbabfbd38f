import RetroRapidDomain

/// What each backend does its own way with `game_checkpoints`, the hot table of running games
/// (one row per running game per interval): how a batch is appended, how a compacting round
/// deletes what it made redundant, and how a game's rows are read back. The rules around them
/// (``SQLRunningGameRepository``) are written once.
///
/// Threading rule: as its connection, one thread at a time (a storage thread); every method
/// runs inside the caller's transaction.
public protocol SQLCheckpointTable {
    /// An id above every row committed so far and at or below every row appended after this
    /// call: where a compacting round starts (SQLite: the table's largest rowid + 1;
    /// PostgreSQL: the identity's largest value + 1, handed out in rising order).
    func nextRowID() throws -> Int64

    /// Appends `batch` (never empty), a slice of a round, as written at `at`. PostgreSQL with
    /// a process to name writes it as one `checkpoint_slices` row, read only once that process
    /// is gone (``gatherSlices(notSeenSince:)``); otherwise a row per game.
    func append(_ batch: [GameCheckpoint], at: String) throws

    /// Appends `log`, a game's whole log, as a row of its own that any node reads at once:
    /// how a game handed to another node leaves it everything.
    func appendHandedOver(_ log: GameCheckpoint, at: String) throws

    /// Deletes this process's oldest slices below `first`, about `games` games' lines of them
    /// (at least one slice), once a compacting round has written a whole log at or above
    /// `first` of every game it runs. Returns whether any are left. None on SQLite.
    func deleteOwnSlices(below first: Int64, games: Int) throws -> Bool

    /// The slices of every other process whose node has not been seen since `seenSince` (or
    /// has left, or restarted as another process) joined into rows of their games that still
    /// run, each game's log as one whole-log row, and then deleted; a game whose log a later
    /// row already holds whole is left as it is. Returns how many games it wrote. Nothing to
    /// do on SQLite.
    func gatherSlices(notSeenSince seenSince: String) throws -> Int

    /// Deletes the rows with an id in `ids` (all below `compaction.first`) that the compacting
    /// round made redundant: those of a game in `compaction.covered` (its full log is at or
    /// above `first`) and those of games no longer running. A running game left out of
    /// `covered` keeps every row.
    func deleteCompacted(_ ids: ClosedRange<Int64>, of compaction: CheckpointCompaction) throws

    /// Calls `body` with every row of the games `publicIDs`, each game's in id order (other
    /// games' rows may come between).
    func forEachRow(ofGames publicIDs: [String], _ body: (CheckpointRow) throws -> Void) throws
}

extension SQLCheckpointTable {
    public func appendHandedOver(_ log: GameCheckpoint, at: String) throws {
        try append([log], at: at)
    }

    public func deleteOwnSlices(below first: Int64, games: Int) throws -> Bool { false }

    public func gatherSlices(notSeenSince seenSince: String) throws -> Int { 0 }
}

/// One `game_checkpoints` row as read back.
public struct CheckpointRow {
    public var publicID: String
    public var steps: Int
    public var movesBefore: Int
    public var moves: String
    public var durationMilliseconds: Int
    public var at: String

    public init(publicID: String, steps: Int, movesBefore: Int, moves: String, durationMilliseconds: Int, at: String) {
        self.publicID = publicID
        self.steps = steps
        self.movesBefore = movesBefore
        self.moves = moves
        self.durationMilliseconds = durationMilliseconds
        self.at = at
    }
}
