/// A compacting round's deletion, done a part at a time
/// (``RunningGameRepository/compactCheckpoints(_:)``).
///
/// A part is a range of ids, never "the next so many rows": its work is bounded by the range
/// whatever plan the database picks (PostgreSQL can plan a read of "the next so many rows" as
/// a scan of every row below the round: 67–84 ms a part at 12,000 games). And each compaction
/// starts where the one before left every row gone (``following(first:covered:rowsPerPart:)``),
/// not at the table's lowest id: on PostgreSQL the rows an earlier compaction deleted stay in
/// the index until vacuum, and reading past them is slow until then.
public struct CheckpointCompaction: Sendable, Equatable {
    /// Rows below this id are looked at: where the round started (`nextCheckpointRowID`).
    public let first: Int64
    /// The games whose whole log the round wrote at or above `first`.
    public let covered: Set<String>
    /// How many ids one part looks at, at least 1.
    public let rowsPerPart: Int
    /// The lowest id the next part looks at; nil before the first part (from the table's
    /// lowest id, or where the compaction before ended: ``following(first:covered:rowsPerPart:)``).
    public var next: Int64?
    /// The lowest id of a row a part looked at and kept (a running game the round did not
    /// cover, on this node or another); nil while every row looked at went.
    public var lowestKept: Int64?
    /// Every id below `first` has been looked at.
    public var isFinished = false

    /// How many games a checkpoint slice holds unless `--checkpoint-games-per-slice` says (the
    /// same default as that setting's).
    public static let defaultGamesPerSlice = 1_000

    /// How many ids one part looks at when the round had `games` games: half a round's rows,
    /// never fewer than a slice's games. A minute of rows (60 rounds) then goes in about 120
    /// parts, 12 s at one a tick, a part taking a third of a round at the median
    /// (docs/BENCHMARKS.md, "Checkpoints of running games").
    public static func rowsPerPart(games: Int, gamesPerSlice: Int) -> Int {
        max(gamesPerSlice, games / 2)
    }

    public init(first: Int64, covered: Set<String>, rowsPerPart: Int, next: Int64? = nil) {
        self.first = first
        self.covered = covered
        self.rowsPerPart = max(1, rowsPerPart)
        self.next = next
    }

    /// Once finished: below this id no row is left (the lowest row kept, or `first`).
    public var leftNothingBelow: Int64? {
        guard isFinished else { return nil }
        return lowestKept ?? first
    }

    /// The compaction of the next compacting round, which starts where this one left nothing
    /// below, when that is sure to hold: this one finished, its round covered some game (so
    /// rows at or above its `first` remain, and SQLite, which hands the largest rowid + 1 to a
    /// new row, cannot hand out an id below it again), and the new round starts above that
    /// point. Otherwise the new one starts at the table's lowest id.
    public func following(first: Int64, covered: Set<String>, rowsPerPart: Int) -> CheckpointCompaction {
        var start: Int64?
        if let floor = leftNothingBelow, !self.covered.isEmpty, floor <= first { start = floor }
        return CheckpointCompaction(first: first, covered: covered, rowsPerPart: rowsPerPart, next: start)
    }
}
