/// The INSERTs that append checkpoint rows (`SQLiteCheckpointTable.append`), one per
/// number of rows from 1 to ``rowsPerInsert``, each compiled the first time a batch needs it
/// and found again by its row count: looking a statement up by its text hashes the whole
/// text, and these are long. Bound to one connection and used from its thread, like it.
final class CheckpointInsertStatements {
    /// Rows one INSERT holds at most. One row per game, thousands a second: a statement's own
    /// work (starting, halting and resetting it) was a third of a row's cost when each row
    /// had its own (docs/BENCHMARKS.md, "Checkpoint rows").
    static let rowsPerInsert = 32

    private let database: Database
    private var prepared: [Statement?] = Array(repeating: nil, count: rowsPerInsert)

    init(_ database: Database) {
        self.database = database
    }

    /// The INSERT of `rows` rows (1 to ``rowsPerInsert``).
    func insert(rows: Int) throws -> Statement {
        precondition((1...Self.rowsPerInsert).contains(rows), "a checkpoint INSERT holds 1 to \(Self.rowsPerInsert) rows")
        if let statement = prepared[rows - 1] { return statement }
        let statement = try database.prepare(Self.sql(rows: rows))
        prepared[rows - 1] = statement
        return statement
    }

    /// `INSERT … VALUES (…), (…)` of `rows` rows: `at` is ?1, shared by every row; row r's five
    /// values (public id, steps, moves before, moves, duration) are ?(2+5r) to ?(6+5r).
    static func sql(rows: Int) -> String {
        var sql = "INSERT INTO game_checkpoints (public_id, steps, moves_before, moves, duration_ms, at) VALUES "
        for row in 0..<rows {
            let base = 2 + 5 * row
            if row > 0 { sql += ", " }
            sql += "(?" + String(base) + ", ?" + String(base + 1) + ", ?" + String(base + 2) + ", ?" + String(base + 3)
                + ", ?" + String(base + 4) + ", ?1)"
        }
        return sql
    }
}
