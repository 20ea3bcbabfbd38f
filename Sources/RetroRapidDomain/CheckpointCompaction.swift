/// A compacting round's deletion, done a part at a time
/// (``RunningGameRepository/compactCheckpoints(_:)``).
public struct CheckpointCompaction: Sendable, Equatable {
    /// Rows below this id are looked at: where the round started (`nextCheckpointRowID`).
    public let first: Int64
    /// The games whose whole log the round wrote at or above `first`.
    public let covered: Set<String>
    /// How many rows one part looks at, at least 1.
    public let rowsPerPart: Int
    /// The lowest id the next part looks at; nil before the first part (from the lowest row).
    public var next: Int64?

    /// How many games a checkpoint slice holds unless `--checkpoint-games-per-slice` says (the
    /// same default as that setting's).
    public static let defaultGamesPerSlice = 1_000

    /// How many rows one part looks at when the round had `games` games: half a round's rows,
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
}
