import RetroRapidDomain
import RetroRapidSQL

/// PostgreSQL's way with `game_checkpoints` (``SQLCheckpointTable``): a whole batch appended
/// in one binary COPY (``PostgresBinaryCopy``: one round trip whatever the batch's size), a
/// compaction's part deleted in one statement, and a game's rows read through the index
/// `game_checkpoints_by_game`, keyed by the game alone (many nodes share the table, so a scan
/// of it would read every node's games).
///
/// Threading rule: as its ``PostgresConnection``, one thread at a time (a storage thread).
public struct PostgresCheckpointTable: SQLCheckpointTable {
    let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    public func nextRowID() throws -> Int64 {
        // Identity values are handed out in rising order, so a row appended after this read
        // gets a larger id than any row committed before it.
        try connection.execute("SELECT coalesce(max(id), 0) + 1 FROM game_checkpoints").first?.int64(at: 0) ?? 1
    }

    /// `batch` as one binary COPY: its rows as bytes, the moves encoded straight into the
    /// buffer, nothing quoted on this side or parsed as text on the server's.
    public func append(_ batch: [GameCheckpoint], at: String) throws {
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
        try connection.copyIn("""
            COPY game_checkpoints (public_id, steps, moves_before, moves, duration_ms, at) FROM STDIN (FORMAT binary)
            """, rows)
    }

    /// The columns `append` writes, in its COPY's order.
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
    public init(postgres connection: PostgresConnection, dailyFreePlays: Int = 5) {
        self.init(executor: connection, checkpoints: PostgresCheckpointTable(connection: connection), dailyFreePlays: dailyFreePlays)
    }
}
