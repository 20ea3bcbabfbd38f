import RetroRapidDomain
import RetroRapidSQL

/// Joins the checkpoint slices of processes that are gone into rows of their games, so the
/// node that claims one of those games reads its log through the index by game, as it reads a
/// log handed over (docs/STORAGE.md, "Checkpoint slices").
///
/// A process is gone when no `cluster_nodes` row names it as its node's process with a
/// heartbeat since the lease began: it died, left, or its node restarted as a new process.
/// Its slices hold the moves of the games it ran since its last compaction; for each such game
/// that still runs, its rows in `game_checkpoints` and its lines in the slices are joined in id
/// order (both tables take ids from one sequence) exactly as ``CheckpointLog`` joins them when
/// the game is read, and replaced by one whole-log row (and, when the join broke off, the row
/// it broke at, so the reader finds the same problem). A game whose newest whole log is a row
/// of its own above every line of the slices was handed over after them; it is left alone.
///
/// One process at a time, in one transaction with the caller's: its slices are locked first
/// (`FOR UPDATE`), so two nodes gathering the same process take turns and the second finds
/// nothing. A slice whose text cannot be read is skipped; the lines after it then break off
/// the game's log, which the recovery reports.
///
/// Threading rule: as its ``PostgresConnection``, one thread at a time (a storage thread).
struct PostgresSliceGathering {
    let connection: PostgresConnection
    /// The caller's own process, never gathered: its slices are its live games'.
    let ownProcess: String?

    /// Gathers every gone process's slices; returns how many games' logs it wrote.
    func gather(notSeenSince seenSince: String) throws -> Int {
        let gone = try connection.execute("""
            SELECT s.instance FROM checkpoint_slices s
            WHERE s.instance <> $1
              AND NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.instance = s.instance AND n.seen_at >= $2)
            GROUP BY s.instance ORDER BY min(s.id)
            """, [ownProcess ?? "", seenSince]).map { $0.string(at: 0) }
        var written = 0
        for process in gone { written += try gather(process) }
        return written
    }

    /// One line of a slice or one game row, with the id it sits at in the joined order.
    private struct Part {
        let id: Int64
        let row: CheckpointRow
        let ownRow: Bool
    }

    private func gather(_ process: String) throws -> Int {
        let slices = try connection.execute("""
            SELECT id, data, at FROM checkpoint_slices WHERE instance = $1 ORDER BY id FOR UPDATE
            """, [process])
        guard !slices.rows.isEmpty else { return 0 }
        var parts: [String: [Part]] = [:]
        for slice in slices.map({ $0 }) {
            guard let id = slice.optionalInt64(at: 0), let entries = try? CheckpointSlice.decode(slice.string(at: 1)) else { continue }
            let at = slice.string(at: 2)
            for entry in entries {
                parts[entry.publicID, default: []].append(Part(id: id, row: CheckpointRow(
                    publicID: entry.publicID, steps: entry.steps, movesBefore: entry.movesBefore, moves: entry.moves,
                    durationMilliseconds: entry.durationMilliseconds, at: at), ownRow: false))
            }
        }
        let running = try connection.execute("SELECT public_id FROM running_games WHERE public_id = ANY ($1::text[])",
                                             [SQLDialect.postgresArray(Array(parts.keys))]).map { $0.string(at: 0) }
        for row in try connection.execute("""
            SELECT id, public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints
            WHERE public_id = ANY ($1::text[])
            """, [SQLDialect.postgresArray(running)]).map({ $0 }) {
            parts[row.string(at: 1), default: []].append(Part(id: row.int64(at: 0), row: CheckpointRow(
                publicID: row.string(at: 1), steps: row.int(at: 2), movesBefore: row.int(at: 3), moves: row.string(at: 4),
                durationMilliseconds: row.int(at: 5), at: row.string(at: 6)), ownRow: true))
        }

        var rewritten: [String] = []
        var rows: [CheckpointRow] = []
        for game in running {
            guard let joined = Self.joined(parts[game] ?? []) else { continue }
            rewritten.append(game)
            rows += joined
        }
        if !rewritten.isEmpty {
            try connection.execute("DELETE FROM game_checkpoints WHERE public_id = ANY ($1::text[])",
                                   [SQLDialect.postgresArray(rewritten)])
            try PostgresCheckpointTable(connection: connection).appendRows(rows)
        }
        try connection.execute("DELETE FROM checkpoint_slices WHERE instance = $1", [process])
        return rewritten.count
    }

    /// A game's rows and lines joined in id order: its whole log as one row, then the row its
    /// log broke off at, if any. Nil when a whole log of its own rows comes after every line.
    private static func joined(_ unordered: [Part]) -> [CheckpointRow]? {
        let parts = unordered.sorted { $0.id < $1.id }
        guard let lastLine = parts.last(where: { !$0.ownRow }) else { return nil }
        if let lastWhole = parts.last(where: { $0.ownRow && $0.row.movesBefore == 0 }), lastWhole.id > lastLine.id { return nil }
        var log = CheckpointLog()
        var brokeAt: CheckpointRow?
        for part in parts {
            let row = part.row
            log.append(steps: row.steps, movesBefore: row.movesBefore, moves: row.moves,
                       durationMilliseconds: row.durationMilliseconds, at: row.at)
            if log.problem != nil {
                brokeAt = row
                break
            }
        }
        var joined: [CheckpointRow] = []
        if let at = log.at, let game = parts.first?.row.publicID {
            joined.append(CheckpointRow(publicID: game, steps: log.steps, movesBefore: 0, moves: CheckpointLog.encode(log.moves),
                                        durationMilliseconds: log.durationMilliseconds, at: at))
        }
        if let brokeAt { joined.append(brokeAt) }
        return joined
    }
}
