import RetroRapidDomain
import RetroRapidSQL

/// PostgreSQL's way with the checkpoints of running games (``SQLCheckpointTable``).
///
/// A node writes each slice of a round as one `checkpoint_slices` row named after its process
/// (``CheckpointSlice``: a line per game), in one binary COPY (``PostgresBinaryCopy``): a row
/// per game a second cost PostgreSQL seven times what it costs SQLite (docs/BENCHMARKS.md,
/// "Checkpoints on PostgreSQL"). Those rows are read only once their process is gone, by the
/// node that claims one of its games (``gatherSlices(notSeenSince:)``,
/// ``PostgresSliceGathering``), which joins them into a row per game in `game_checkpoints`.
/// There, read through the index `game_checkpoints_by_game` keyed by the game alone, are the
/// rows any node reads at once: a whole log handed over, the gathered logs, and every row a
/// connection without a process writes (the operator's tools, the benchmark's per-game runs).
/// A compaction's part deletes redundant game rows in one statement, and this process's slices
/// below the compacting round in another.
///
/// Threading rule: as its ``PostgresConnection``, one thread at a time (a storage thread).
public struct PostgresCheckpointTable: SQLCheckpointTable {
    let connection: PostgresConnection
    /// The process whose slices this writes (`cluster_nodes.instance`); nil: a row per game.
    let process: String?

    public init(connection: PostgresConnection, process: String? = nil) {
        self.connection = connection
        self.process = process
    }

    public func nextRowID() throws -> Int64 {
        // Both tables take ids from game_checkpoints' sequence, which hands them out in rising
        // order, so a row appended after this read gets a larger id than any committed before it.
        try connection.execute("""
            SELECT greatest((SELECT coalesce(max(id), 0) FROM game_checkpoints),
                            (SELECT coalesce(max(id), 0) FROM checkpoint_slices)) + 1
            """).first?.int64(at: 0) ?? 1
    }

    /// A slice of a round: one `checkpoint_slices` row when this table writes for a process,
    /// else a row per game.
    public func append(_ batch: [GameCheckpoint], at: String) throws {
        guard let process else { return try appendRows(batch, at: at) }
        var rows = PostgresBinaryCopy(reservingCapacity: 64 + batch.count * 40)
        rows.beginRow(fields: 4)
        rows.appendText(process)
        rows.appendBigint(Int64(batch.count))
        rows.appendText { CheckpointSlice.encode(batch, appendingTo: &$0) }
        rows.appendText(at)
        try connection.copyIn("COPY checkpoint_slices (instance, games, data, at) FROM STDIN (FORMAT binary)", rows)
    }

    public func appendHandedOver(_ log: GameCheckpoint, at: String) throws {
        try appendRows([log], at: at)
    }

    /// Slices in id order until the next would pass `games` lines: deleting a slice deletes
    /// its text's chunks too (it is stored out of line), so a part's work follows its lines.
    public func deleteOwnSlices(below first: Int64, games: Int) throws -> Bool {
        guard let process else { return false }
        let oldest = try connection.execute("""
            SELECT id, games FROM checkpoint_slices WHERE instance = $1 AND id < $2 ORDER BY id LIMIT \(Self.slicesLookedAt)
            """, [process, first]).map { ($0.int64(at: 0), $0.int64(at: 1)) }
        var doomed: [Int64] = []
        var lines: Int64 = 0
        for (id, count) in oldest {
            // Counts come from the database: a sum past Int64 ends the part, never traps.
            let (sum, overflow) = lines.addingReportingOverflow(count)
            guard doomed.isEmpty || (!overflow && sum <= Int64(games)) else { break }
            doomed.append(id)
            lines = overflow ? Int64.max : sum
        }
        guard !doomed.isEmpty else { return false }
        try connection.execute("DELETE FROM checkpoint_slices WHERE id = ANY ($1::bigint[])",
                               [SQLDialect.postgresArray(doomed.map(String.init))])
        return doomed.count < oldest.count || oldest.count == Self.slicesLookedAt
    }

    /// How many of the oldest slices one part of a compaction looks at.
    private static let slicesLookedAt = 64

    public func gatherSlices(notSeenSince seenSince: String) throws -> Int {
        try PostgresSliceGathering(connection: connection, ownProcess: process).gather(notSeenSince: seenSince)
    }

    /// `batch` as rows of `game_checkpoints` in one binary COPY: its rows as bytes, the moves
    /// encoded straight into the buffer, nothing quoted on this side or parsed as text on the
    /// server's.
    func appendRows(_ batch: [GameCheckpoint], at: String) throws {
        // A row: 2 bytes of field count, 6 lengths, 3 bigints, an id, a few moves and the time.
        let rowBytes: Int = 2 + 6 * 4 + 3 * 8 + 16 + 24 + at.utf8.count
        var rows = PostgresBinaryCopy(reservingCapacity: batch.count * rowBytes)
        for checkpoint in batch {
            rows.beginRow(fields: Self.fields)
            rows.appendText(checkpoint.publicID)
            rows.appendBigint(Int64(checkpoint.steps))
            rows.appendBigint(Int64(checkpoint.movesBefore))
            rows.appendText { CheckpointLog.encode(checkpoint.moves, appendingTo: &$0) }
            rows.appendBigint(Int64(max(0, checkpoint.durationMilliseconds)))
            rows.appendText(at)
        }
        try connection.copyIn(Self.copyIntoGameRows, rows)
    }

    /// `rows` as rows of `game_checkpoints` in one binary COPY, their moves as stored: how the
    /// logs gathered from a gone process's slices are written (``PostgresSliceGathering``).
    func appendRows(_ rows: [CheckpointRow]) throws {
        guard !rows.isEmpty else { return }
        var copy = PostgresBinaryCopy()
        for row in rows {
            copy.beginRow(fields: Self.fields)
            copy.appendText(row.publicID)
            copy.appendBigint(Int64(row.steps))
            copy.appendBigint(Int64(row.movesBefore))
            copy.appendText(row.moves)
            copy.appendBigint(Int64(max(0, row.durationMilliseconds)))
            copy.appendText(row.at)
        }
        try connection.copyIn(Self.copyIntoGameRows, copy)
    }

    /// The COPY both `appendRows` write with, and its column count.
    private static let copyIntoGameRows =
        "COPY game_checkpoints (public_id, steps, moves_before, moves, duration_ms, at) FROM STDIN (FORMAT binary)"
    private static let fields: Int16 = 6

    /// A row in `ids` goes when its game is covered or no longer runs. The covered games are
    /// bound as one array, which PostgreSQL looks a row's game up in by hashing only when the
    /// plan is made for the array's value: a plan kept for any value (the prepared statement's
    /// generic plan, chosen after a few runs) searches the array from the start for every row,
    /// and a part of 6,000 rows with 12,000 covered games took half a second. So this
    /// transaction plans it afresh each time.
    public func deleteCompacted(_ ids: ClosedRange<Int64>, of compaction: CheckpointCompaction) throws {
        try connection.executeScript("SET LOCAL plan_cache_mode = force_custom_plan")
        try connection.execute("""
            DELETE FROM game_checkpoints c
            WHERE c.id >= $1 AND c.id <= $2
              AND (c.public_id = ANY ($3::text[])
                   OR NOT EXISTS (SELECT 1 FROM running_games r WHERE r.public_id = c.public_id))
            """, [ids.lowerBound, ids.upperBound, SQLDialect.postgresArray(Array(compaction.covered))])
    }

    public func forEachRow(ofGames publicIDs: [String], _ body: (CheckpointRow) throws -> Void) throws {
        let rows = try connection.execute("""
            SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints
            WHERE public_id = ANY ($1::text[]) ORDER BY public_id, id
            """, [SQLDialect.postgresArray(publicIDs)])
        for row in rows.map({ $0 }) {
            try body(CheckpointRow(publicID: row.string(at: 0), steps: row.int(at: 1), movesBefore: row.int(at: 2),
                                   moves: row.string(at: 3), durationMilliseconds: row.int(at: 4), at: row.string(at: 5)))
        }
    }
}

extension SQLRunningGameRepository {
    /// The running games of one PostgreSQL connection: the connection and its checkpoint table.
    ///
    /// - Parameter process: the process whose round slices it writes (a cluster node's
    ///   `cluster_nodes.instance`); nil writes a row per game.
    public init(postgres connection: PostgresConnection, process: String? = nil, dailyFreePlays: Int = 5) {
        self.init(executor: connection, checkpoints: PostgresCheckpointTable(connection: connection, process: process),
                  dailyFreePlays: dailyFreePlays)
    }
}
