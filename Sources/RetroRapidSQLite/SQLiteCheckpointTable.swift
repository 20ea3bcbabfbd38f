import RetroRapidDomain
import RetroRapidSQL

/// SQLite's way with `game_checkpoints` (``SQLCheckpointTable``): batches appended in
/// multi-row INSERTs with their texts bound in place, a compacting round's delete as a range
/// of the rowid where it can be, and a game's rows read in one pass over the table, which has
/// no index but its rowid (an index would cost every append, thousands of rows a second, to
/// save a read that happens at a crash or a resume).
///
/// Threading rule: as its ``SQLiteExecutor``, one thread at a time (the storage thread).
public final class SQLiteCheckpointTable: SQLCheckpointTable {
    let executor: SQLiteExecutor
    private let inserts: CheckpointInsertStatements
    // The append's buffers, reused from batch to batch.
    private var texts: [UInt8] = []
    private var spans: [Range<Int>] = []
    /// The last compaction's running games left out of it (`keptRunning(by:)`).
    private var kept: (first: Int64, covered: Int, games: [String])?

    public init(executor: SQLiteExecutor) {
        self.executor = executor
        self.inserts = CheckpointInsertStatements(executor.database)
    }

    /// Rows one checkpoint INSERT holds at most (`CheckpointInsertStatements`).
    package static var rowsPerInsert: Int { CheckpointInsertStatements.rowsPerInsert }

    public func nextRowID() throws -> Int64 {
        // The largest rowid of an INTEGER PRIMARY KEY is read from the end of the tree, not a scan.
        try executor.prepare("SELECT coalesce(max(id), 0) + 1 FROM game_checkpoints").query { $0.int64(at: 0) }.first ?? 1
    }

    /// `batch` in INSERTs of up to ``rowsPerInsert`` rows: one commit, a few pages appended.
    public func append(_ batch: [GameCheckpoint], at: String) throws {
        var start = batch.startIndex
        while start < batch.endIndex {
            let rows = batch[start..<min(start + Self.rowsPerInsert, batch.endIndex)]
            try insert(rows, with: inserts.insert(rows: rows.count), at: at)
            start = rows.endIndex
        }
    }

    public func deleteCompacted(_ ids: ClosedRange<Int64>, of compaction: CheckpointCompaction) throws {
        let kept = try keptRunning(by: compaction)
        if kept.isEmpty {
            // The usual case: a range of the rowid, deleted without reading the rows.
            try executor.prepare("DELETE FROM game_checkpoints WHERE id >= ? AND id <= ?").execute([ids.lowerBound, ids.upperBound])
        } else {
            try executor.query("""
                DELETE FROM game_checkpoints WHERE id >= $1 AND id <= $2 AND NOT \(SQLDialect.sqlite.isOneOf("public_id", textListAt: "$3"))
                """, [ids.lowerBound, ids.upperBound, SQLDialect.sqlite.textList(kept)])
        }
    }

    /// The running games `compaction` did not cover, whose rows stay: read once per compaction
    /// (its parts come one after another on this connection), not once per part. Read once is
    /// enough: a game that begins later has no row below `first`, and one that ends later only
    /// keeps its rows until the next compaction.
    private func keptRunning(by compaction: CheckpointCompaction) throws -> [String] {
        if let kept, kept.first == compaction.first, kept.covered == compaction.covered.count { return kept.games }
        let running = try executor.prepare("SELECT public_id FROM running_games").query { $0.string(at: 0) }
        let games = running.filter { !compaction.covered.contains($0) }
        kept = (compaction.first, compaction.covered.count, games)
        return games
    }

    /// One pass over the whole table in id order, not one query per game, keeping the rows of
    /// `publicIDs` only.
    public func forEachRow(ofGames publicIDs: [String], _ body: (CheckpointRow) throws -> Void) throws {
        let wanted = Set(publicIDs)
        let scan = try executor.prepare("SELECT public_id, steps, moves_before, moves, duration_ms, at FROM game_checkpoints ORDER BY id")
        _ = try scan.query { row -> Void in
            let id = row.string(at: 0)
            guard wanted.contains(id) else { return }
            try body(CheckpointRow(publicID: id, steps: row.int(at: 1), movesBefore: row.int(at: 2), moves: row.string(at: 3),
                                   durationMilliseconds: row.int(at: 4), at: row.string(at: 5)))
        }
    }

    /// `rows` (at most ``rowsPerInsert``) in one run of `insert`, the statement of that many
    /// rows. Every value is bound as what it is, with no array of existentials; the two texts
    /// of each row are written into `texts` (reused) and bound in place, not copied by SQLite,
    /// and the bindings are cleared before `texts` can change, so the statement never keeps a
    /// stale pointer.
    private func insert(_ rows: ArraySlice<GameCheckpoint>, with insert: Statement, at: String) throws {
        texts.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        for checkpoint in rows {
            let idStart = texts.count
            texts.append(contentsOf: checkpoint.publicID.utf8)
            spans.append(idStart..<texts.count)
            let movesStart = texts.count
            CheckpointLog.encode(checkpoint.moves, appendingTo: &texts)
            spans.append(movesStart..<texts.count)
        }
        defer { insert.clearBindings() }
        try insert.bindText(at, at: 1)
        try texts.withUnsafeBytes { buffer in
            for (row, checkpoint) in rows.enumerated() {
                let base = 2 + 5 * row
                try insert.bindTextInPlace(UnsafeRawBufferPointer(rebasing: buffer[spans[2 * row]]), at: base)
                try insert.bindInteger(Int64(checkpoint.steps), at: base + 1)
                try insert.bindInteger(Int64(checkpoint.movesBefore), at: base + 2)
                try insert.bindTextInPlace(UnsafeRawBufferPointer(rebasing: buffer[spans[2 * row + 1]]), at: base + 3)
                try insert.bindInteger(Int64(max(0, checkpoint.durationMilliseconds)), at: base + 4)
            }
            try insert.execute()
        }
    }
}

extension SQLRunningGameRepository {
    /// The running games of one SQLite connection: its executor and its checkpoint table.
    public init(sqlite executor: SQLiteExecutor, dailyFreePlays: Int = 5) {
        self.init(executor: executor, checkpoints: SQLiteCheckpointTable(executor: executor), dailyFreePlays: dailyFreePlays)
    }
}
