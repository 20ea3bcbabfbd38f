import RetroRapidDomain
import RetroRapidSQL

/// PostgreSQL's way with `game_checkpoints` (``SQLCheckpointTable``): a whole batch appended
/// in one statement (`unnest` over arrays bound as five parameters: one round trip whatever
/// the batch's size), a compacting round's delete as one statement, and a game's rows read
/// through the index `game_checkpoints_by_game` (many nodes share the table, so a scan of it
/// would read every node's games).
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

    public func append(_ batch: [GameCheckpoint], at: String) throws {
        try connection.execute("""
            INSERT INTO game_checkpoints (public_id, steps, moves_before, moves, duration_ms, at)
            SELECT public_id, steps, moves_before, moves, duration_ms, $6
            FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[])
                AS batch (public_id, steps, moves_before, moves, duration_ms)
            """, [
                SQLDialect.postgresArray(batch.map(\.publicID)),
                SQLDialect.postgresArray(batch.map { String($0.steps) }),
                SQLDialect.postgresArray(batch.map { String($0.movesBefore) }),
                SQLDialect.postgresArray(batch.map { CheckpointLog.encode($0.moves) }),
                SQLDialect.postgresArray(batch.map { String(max(0, $0.durationMilliseconds)) }),
                at,
            ])
    }

    /// A row below `first` goes when its game is covered or no longer runs.
    public func deleteCompacted(before first: Int64, covered: Set<String>) throws {
        try connection.execute("""
            DELETE FROM game_checkpoints c
            WHERE c.id < $1
              AND (c.public_id = ANY ($2::text[])
                   OR NOT EXISTS (SELECT 1 FROM running_games r WHERE r.public_id = c.public_id))
            """, [first, SQLDialect.postgresArray(Array(covered))])
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
