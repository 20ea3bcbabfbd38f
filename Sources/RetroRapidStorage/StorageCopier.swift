import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidSQLite

/// Copies every row of a SQLite store into an empty PostgreSQL database: how an installation
/// moves from one server with a file to many nodes on one database (`retrorapid copy-database`,
/// docs/OPERATIONS.md "Moving from SQLite to PostgreSQL").
///
/// All or nothing, and checked before it counts:
/// * the source is read inside one read transaction, so the copy is one snapshot even while a
///   server writes to the file (what it writes after the snapshot is not copied);
/// * the target is written in ONE transaction, with its tables locked against other writers,
///   and only into a database whose tables are all empty (checked before its migrations run,
///   and again under the lock): any failure rolls it all back;
/// * before that transaction commits, every table's row count and a digest of all its rows are
///   compared with the source's (``rowDigest(_:)``): a mismatch rolls back and says which table.
///
/// Nothing is written per column by hand: the tables, their columns and their order come from
/// the two databases (SQLite's `sqlite_schema` and `PRAGMA table_info`, PostgreSQL's
/// information_schema and foreign keys), and each value is converted by the type of its target
/// column (SQLite's 0/1 to `boolean`, blobs to `bytea`). Ids are kept; afterwards every identity
/// sequence is moved past the largest id, so new rows get new ids. `schema_migrations` is left
/// out: each backend records its own migrations.
///
/// Threading rule: runs on the calling thread (the command's main thread), which owns both
/// connections for the whole copy.
public struct StorageCopier {
    /// Rows per multi-row INSERT (fewer for a table so wide that 500 rows would pass
    /// PostgreSQL's 65,535 parameters).
    public static let defaultBatchRows = 500

    /// Tables that PostgreSQL's triggers fill from another table (`score_counts`, from the
    /// `best_scores` trigger of Migrations/postgresql/0001_initial.sql): inserting them too would
    /// count every score twice, so they are rebuilt by the trigger and then checked against the
    /// source like every other table.
    public static let triggerMaintainedTables: Set<String> = ["score_counts"]

    public let source: SQLiteStorage
    public let target: PostgresStorage
    public let batchRows: Int

    public init(from source: SQLiteStorage, to target: PostgresStorage, batchRows: Int = StorageCopier.defaultBatchRows) {
        precondition(batchRows >= 1, "a batch holds at least one row")
        self.source = source
        self.target = target
        self.batchRows = batchRows
    }

    /// How far the copy is, after each batch.
    public struct Progress: Sendable, Equatable {
        /// The table being copied.
        public let table: String
        /// Rows inserted so far, over all tables.
        public let copiedRows: Int
        /// Rows to insert in all (every table but the trigger-maintained ones).
        public let totalRows: Int
    }

    /// What a copy did.
    public struct Report: Sendable, Equatable {
        public struct Table: Sendable, Equatable {
            public let name: String
            /// Rows in the table on both sides (checked equal, with equal digests).
            public let rows: Int
            /// True for a table PostgreSQL's triggers rebuilt rather than the copier inserted.
            public let rebuiltByTrigger: Bool
        }

        /// Every table, in the order it was copied (parents before the tables that refer to them).
        public let tables: [Table]
        /// Migrations applied to the target before the copy (empty when it was migrated already).
        public let appliedTargetMigrations: [String]
        /// Each identity column and the id its next row gets, e.g. `players.id` → 43.
        public let nextIDs: [String: Int64]

        public var copiedRows: Int { tables.filter { !$0.rebuiltByTrigger }.reduce(0) { $0 + $1.rows } }
    }

    /// Why nothing was copied. In every case the target holds no copied row: a refusal comes
    /// before its transaction, a failure rolls it back.
    public struct Refusal: Error, CustomStringConvertible, Sendable, Equatable {
        public enum Reason: Sendable, Equatable {
            /// The SQLite store has migrations still to apply.
            case sourceNotMigrated
            /// A table of the target already holds rows.
            case targetNotEmpty
            /// The two schemas do not have the same tables and columns, or a type the copier
            /// does not convert.
            case schemaMismatch
            /// A value that its PostgreSQL column cannot hold (2 in a boolean, a real number).
            case unconvertibleValue
            /// PostgreSQL refused a row (a CHECK, a foreign key, text it cannot store).
            case writeFailed
            /// After the copy, a table's rows on the two sides differ.
            case verificationFailed
        }

        public let reason: Reason
        public let message: String
        public var description: String { message }

        init(_ reason: Reason, _ message: String) {
            self.reason = reason
            self.message = message
        }
    }

    // MARK: - The copy

    /// Copies the whole store; returns what it copied, or throws a ``Refusal`` (or the error of
    /// a connection that failed) having committed nothing.
    @discardableResult
    public func copy(progress: (Progress) -> Void = { _ in }) throws -> Report {
        let database = source.database
        return try database.transaction(.deferred) { db in
            // Reading starts the snapshot (BEGIN alone does not): from here on every read sees
            // the file as it was now, whatever a server commits meanwhile.
            _ = try db.prepare("SELECT count(*) FROM sqlite_schema").query { $0.int(at: 0) }
            let pending = try source.pendingMigrations()
            guard pending.isEmpty else {
                throw Refusal(.sourceNotMigrated, "the SQLite database \(source.location) has migrations still to apply "
                              + "(\(pending.joined(separator: ", "))); run 'retrorapid migrate' on it first, then copy")
            }
            let sourceTables = try sqliteTables(db)

            // Refused before the target's migrations run, so a refused target is left exactly as it was.
            try refuseUnlessEmpty(target.connection, tables: sourceTables.keys.sorted(), lockFirst: false)
            let applied = try target.migrate().map(\.identifier)
            let plan = try copyPlan(source: sourceTables, target: targetTables(target.connection))

            var total = 0
            for table in plan where !table.rebuiltByTrigger {
                total += try db.prepare("SELECT count(*) FROM \(quoted(table.name))").query { $0.int(at: 0) }.first ?? 0
            }

            let (tables, nextIDs) = try target.connection.transaction(.readCommitted) { pg -> ([Report.Table], [String: Int64]) in
                try refuseUnlessEmpty(pg, tables: plan.map(\.name), lockFirst: true)
                var copied = 0
                var digests: [String: RowDigest] = [:]
                for table in plan {
                    if table.rebuiltByTrigger {
                        digests[table.name] = try sourceDigest(db, table)
                        continue
                    }
                    // Only a trigger could have put rows here; one the copier does not know
                    // about would make the check below fail for a reason hard to see.
                    let filled = try pg.execute("SELECT EXISTS (SELECT 1 FROM \(quoted(table.name)))").first?.bool(at: 0) ?? false
                    guard !filled else {
                        throw Refusal(.schemaMismatch, "PostgreSQL's triggers filled table \(table.name) while earlier tables were copied; "
                                      + "StorageCopier.triggerMaintainedTables must name it. Nothing was copied.")
                    }
                    digests[table.name] = try insertRows(of: table, from: db, into: pg) { rows in
                        copied += rows
                        progress(Progress(table: table.name, copiedRows: copied, totalRows: total))
                    }
                }
                let reportTables = try verify(plan, digests: digests, in: pg)
                // After the check, so a failed copy leaves the sequences where they were
                // (setval is not undone by a rollback).
                let nextIDs = try moveSequences(plan, in: pg)
                return (reportTables, nextIDs)
            }
            return Report(tables: tables, appliedTargetMigrations: applied, nextIDs: nextIDs)
        }
    }

    // MARK: - Schemas

    /// One column of a table being copied, with the PostgreSQL type it converts to.
    struct Column {
        let name: String
        let kind: ColumnKind
        let isIdentity: Bool
    }

    /// The PostgreSQL types the copier converts SQLite's values to.
    enum ColumnKind {
        case integer, boolean, bytes, text

        init?(postgresType: String) {
            switch postgresType {
            case "bigint", "integer", "smallint": self = .integer
            case "boolean": self = .boolean
            case "bytea": self = .bytes
            case "text", "character varying", "character": self = .text
            default: return nil
            }
        }
    }

    /// The target's tables as its catalogue describes them.
    struct TargetSchema {
        /// Each table's columns in order: name, `information_schema` data type, identity or not.
        var columns: [String: [(name: String, type: String, isIdentity: Bool)]] = [:]
        /// The tables each table's foreign keys point to (itself left out).
        var parents: [String: Set<String>] = [:]
    }

    /// A table as it is copied: its columns in the target's order.
    struct TablePlan {
        let name: String
        let columns: [Column]
        let rebuiltByTrigger: Bool
    }

    /// The SQLite store's tables (all but SQLite's own and `schema_migrations`) and their columns.
    private func sqliteTables(_ db: Database) throws -> [String: Set<String>] {
        let names = try db.prepare("""
            SELECT name FROM sqlite_schema
            WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations'
            """).query { $0.string(at: 0) }
        var tables: [String: Set<String>] = [:]
        for name in names {
            tables[name] = Set(try db.prepare("SELECT name FROM pragma_table_info(?)").query([name]) { $0.string(at: 0) })
        }
        return tables
    }

    /// The target's tables (all but `schema_migrations`), their columns and foreign keys.
    private func targetTables(_ pg: PostgresConnection) throws -> TargetSchema {
        let rows = try pg.execute("""
            SELECT c.table_name, c.column_name, c.data_type, c.is_identity = 'YES' OR coalesce(c.column_default, '') LIKE 'nextval(%'
            FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_migrations'
            ORDER BY c.table_name, c.ordinal_position
            """)
        var schema = TargetSchema()
        for row in rows.map({ $0 }) {
            schema.columns[row.string(at: 0), default: []].append((row.string(at: 1), row.string(at: 2), row.bool(at: 3)))
        }
        for row in try pg.execute("""
            SELECT child.relname, parent.relname
            FROM pg_constraint c
            JOIN pg_class child ON child.oid = c.conrelid
            JOIN pg_class parent ON parent.oid = c.confrelid
            WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
            """).map({ $0 }) where row.string(at: 0) != row.string(at: 1) {
            schema.parents[row.string(at: 0), default: []].insert(row.string(at: 1))
        }
        return schema
    }

    /// Tables PostgreSQL has and SQLite does not, left empty by a copy: a cluster node's
    /// checkpoint slices (SQLite writes a row per game in `game_checkpoints`, which is copied).
    static let postgresOnlyTables: Set<String> = ["checkpoint_slices"]

    /// The tables in foreign-key order (a table after every table it refers to, ties by name),
    /// after checking that both sides have the same tables and columns.
    private func copyPlan(source: [String: Set<String>], target: TargetSchema) throws -> [TablePlan] {
        var problems: [String] = []
        let onlySQLite = Set(source.keys).subtracting(target.columns.keys).sorted()
        let onlyPostgres = Set(target.columns.keys).subtracting(source.keys).subtracting(Self.postgresOnlyTables).sorted()
        if !onlySQLite.isEmpty { problems.append("tables only in SQLite: \(onlySQLite.joined(separator: ", "))") }
        if !onlyPostgres.isEmpty { problems.append("tables only in PostgreSQL: \(onlyPostgres.joined(separator: ", "))") }
        var plans: [String: TablePlan] = [:]
        for (name, targetColumns) in target.columns where !Self.postgresOnlyTables.contains(name) {
            guard let sourceColumns = source[name] else { continue }
            let targetNames = Set(targetColumns.map(\.name))
            if sourceColumns != targetNames {
                problems.append("table \(name): columns only in SQLite: [\(sourceColumns.subtracting(targetNames).sorted().joined(separator: ", "))], "
                                + "only in PostgreSQL: [\(targetNames.subtracting(sourceColumns).sorted().joined(separator: ", "))]")
                continue
            }
            var columns: [Column] = []
            for column in targetColumns {
                guard let kind = ColumnKind(postgresType: column.type) else {
                    problems.append("\(name).\(column.name) is of type \(column.type), which the copier does not convert to")
                    continue
                }
                columns.append(Column(name: column.name, kind: kind, isIdentity: column.isIdentity))
            }
            plans[name] = TablePlan(name: name, columns: columns, rebuiltByTrigger: Self.triggerMaintainedTables.contains(name))
        }
        guard problems.isEmpty else {
            throw Refusal(.schemaMismatch, "the SQLite and PostgreSQL schemas differ, so nothing was copied: \(problems.joined(separator: "; "))")
        }

        var ordered: [TablePlan] = []
        var placed: Set<String> = []
        while placed.count < plans.count {
            let ready = plans.keys.filter { name in
                !placed.contains(name) && (target.parents[name] ?? []).allSatisfy { placed.contains($0) || plans[$0] == nil }
            }.sorted()
            guard let next = ready.first else {
                throw Refusal(.schemaMismatch, "PostgreSQL's foreign keys form a cycle among \(Set(plans.keys).subtracting(placed).sorted().joined(separator: ", ")); the copier cannot order them")
            }
            ordered.append(plans[next]!)
            placed.insert(next)
        }
        return ordered
    }

    /// Throws ``Refusal/Reason/targetNotEmpty`` when any of `tables` that exists in the target
    /// holds a row. Inside the copy's transaction (`lockFirst`) the tables are locked first
    /// (EXCLUSIVE: others may read, nobody else writes until the copy commits), so no node can
    /// write between the check and the copy.
    private func refuseUnlessEmpty(_ pg: PostgresConnection, tables: [String], lockFirst: Bool) throws {
        let existing = try pg.execute("""
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            """).map { $0.string(at: 0) }
        let present = tables.filter(Set(existing).contains)
        if lockFirst, !present.isEmpty {
            try pg.execute("LOCK TABLE \(present.map(quoted).joined(separator: ", ")) IN EXCLUSIVE MODE")
        }
        var filled: [String] = []
        for table in present {
            if try pg.execute("SELECT EXISTS (SELECT 1 FROM \(quoted(table)))").first?.bool(at: 0) ?? false { filled.append(table) }
        }
        guard filled.isEmpty else {
            throw Refusal(.targetNotEmpty, "the PostgreSQL database \(target.location) already holds rows (in \(filled.joined(separator: ", "))); "
                          + "copy-database copies only into an empty database, and changed nothing there")
        }
    }

    // MARK: - Rows

    /// Streams the table's rows out of the snapshot and inserts them in batches; returns the
    /// digest of the rows read.
    private func insertRows(of table: TablePlan, from db: Database, into pg: PostgresConnection,
                            afterBatch: (_ rows: Int) -> Void) throws -> RowDigest {
        let columnList = table.columns.map { quoted($0.name) }.joined(separator: ", ")
        let perBatch = max(1, min(batchRows, 65_535 / max(1, table.columns.count)))
        var digest = RowDigest()
        var batch: [SQLValue] = []
        var batchCount = 0
        var firstRow = 1

        func flush() throws {
            guard batchCount > 0 else { return }
            let width = table.columns.count
            let tuples = (0..<batchCount).map { row in
                "(" + (1...width).map { "$\(row * width + $0)" }.joined(separator: ", ") + ")"
            }
            do {
                try pg.execute("INSERT INTO \(quoted(table.name)) (\(columnList)) VALUES \(tuples.joined(separator: ", "))", batch)
            } catch let error as PostgresError where !error.isRetryable && !error.isConnectionFailure {
                throw Refusal(.writeFailed, "PostgreSQL refused a row of \(table.name) (one of rows \(firstRow)–\(firstRow + batchCount - 1) as read): "
                              + "\(error.message)\(error.constraint.map { " [constraint \($0)]" } ?? ""). Everything was rolled back: "
                              + "the PostgreSQL database holds no copied row.")
            }
            afterBatch(batchCount)
            firstRow += batchCount
            batch.removeAll(keepingCapacity: true)
            batchCount = 0
        }

        try forEachRow(of: table, in: db) { values in
            digest.add(values)
            for (value, column) in zip(values, table.columns) {
                batch.append(try converted(value, to: column, in: table.name))
            }
            batchCount += 1
            if batchCount == perBatch { try flush() }
        }
        try flush()
        return digest
    }

    /// The digest of a table's rows in the snapshot, without copying them.
    private func sourceDigest(_ db: Database, _ table: TablePlan) throws -> RowDigest {
        var digest = RowDigest()
        try forEachRow(of: table, in: db) { digest.add($0) }
        return digest
    }

    /// Calls `body` with each row's values, in the plan's column order, one row at a time, in
    /// whatever order SQLite reads them (the digest does not depend on it).
    private func forEachRow(of table: TablePlan, in db: Database, _ body: ([DatabaseValue]) throws -> Void) throws {
        let statement = try db.prepare("SELECT \(table.columns.map { quoted($0.name) }.joined(separator: ", ")) FROM \(quoted(table.name))")
        defer { statement.reset() }
        while try statement.step() {
            try body((0..<table.columns.count).map { statement.value(at: $0) })
        }
    }

    /// SQLite's value as its PostgreSQL column takes it.
    private func converted(_ value: DatabaseValue, to column: Column, in table: String) throws -> SQLValue {
        switch (value, column.kind) {
        case (.null, _): return .null
        case (.integer(let number), .integer): return .integer(number)
        case (.integer(0), .boolean): return .boolean(false)
        case (.integer(1), .boolean): return .boolean(true)
        case (.blob(let bytes), .bytes): return .bytes(bytes)
        case (.text(let text), .text): return .text(text)
        default:
            throw Refusal(.unconvertibleValue, "\(table).\(column.name) holds \(Self.describe(value)) in SQLite, which its PostgreSQL column "
                          + "(\(column.kind)) cannot take; nothing was copied")
        }
    }

    private static func describe(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return "the integer \(number)"
        case .real(let number): return "the real number \(number)"
        case .text: return "text"
        case .blob(let bytes): return "a blob of \(bytes.count) bytes"
        }
    }

    // MARK: - The check and the sequences

    /// Compares each table's row count and digest in the target (inside the copy's
    /// transaction, so it sees what is about to commit) with the source's.
    private func verify(_ plan: [TablePlan], digests: [String: RowDigest], in pg: PostgresConnection) throws -> [Report.Table] {
        var mismatches: [String] = []
        var tables: [Report.Table] = []
        for table in plan {
            let expected = digests[table.name] ?? RowDigest()
            let row = try pg.execute("SELECT count(*), \(RowDigest.postgresSum(of: table)) FROM \(quoted(table.name))").first
            let rows = row?.int(at: 0) ?? 0
            let sum = row.flatMap { $0.optionalString(at: 1) }.flatMap { UInt64($0) } ?? 0
            if rows != expected.rows {
                mismatches.append("\(table.name): \(expected.rows) rows in SQLite, \(rows) in PostgreSQL")
            } else if sum != expected.sum {
                mismatches.append("\(table.name): the same \(rows) rows in number, but their contents differ")
            }
            tables.append(Report.Table(name: table.name, rows: rows, rebuiltByTrigger: table.rebuiltByTrigger))
        }
        guard mismatches.isEmpty else {
            throw Refusal(.verificationFailed, "the copy did not match the SQLite database, so it was rolled back and the PostgreSQL "
                          + "database holds no copied row: \(mismatches.joined(separator: "; "))")
        }
        return tables
    }

    /// Moves each identity sequence to the table's largest id, so the next row gets the id
    /// after it (an empty table's sequence starts at 1).
    private func moveSequences(_ plan: [TablePlan], in pg: PostgresConnection) throws -> [String: Int64] {
        var next: [String: Int64] = [:]
        for table in plan {
            for column in table.columns where column.isIdentity {
                let largest = try pg.execute("SELECT max(\(quoted(column.name))) FROM \(quoted(table.name))").first?.optionalInt64(at: 0)
                // The next id would be one more, which no bigint holds (and `+ 1` would trap).
                if largest == .max {
                    throw Refusal(.unconvertibleValue, "\(table.name).\(column.name) holds the id \(Int64.max) in SQLite, the largest a "
                                  + "PostgreSQL identity column can hold, so no row could be added after the copy; renumber that row first")
                }
                try pg.execute("SELECT setval(pg_get_serial_sequence($1, $2), $3, $4)",
                               [quoted(table.name), column.name, largest ?? 1, largest != nil])
                next["\(table.name).\(column.name)"] = (largest ?? 0) + 1
            }
        }
        return next
    }
}

/// A table's rows as one number, the same whichever order they are read in: the sum (mod 2^64)
/// of the first 8 bytes of each row's SHA-256, where a row is written as SQLite stores it
/// (a boolean as the integer 0 or 1, `bytea` as a blob). The source's is computed here while
/// the rows stream past; the target's by PostgreSQL in one aggregate (``postgresSum(of:)``),
/// so the copy is checked without reading it back.
struct RowDigest: Equatable {
    private(set) var rows = 0
    private(set) var sum: UInt64 = 0

    mutating func add(_ values: [DatabaseValue]) {
        var text = ""
        for value in values {
            switch value {
            case .null: text += "n|"
            case .integer(let number): text += "i\(number)|"
            case .real(let number): text += "r\(number)|"  // no column holds one; the copy refuses it anyway
            case .text(let string): text += "t\(string.utf8.count):\(string)|"
            case .blob(let bytes): text += "b\(SHA256.hex(bytes))|"
            }
        }
        let hash = SHA256.hash(Array(text.utf8))
        let leading = hash.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        rows += 1
        sum &+= leading
    }

    /// The SQL expression that computes the same sum over a PostgreSQL table's rows, as
    /// unsigned decimal text.
    static func postgresSum(of table: StorageCopier.TablePlan) -> String {
        let fields = table.columns.map { column -> String in
            let name = quoted(column.name)
            let field: String
            switch column.kind {
            case .integer: field = "'i' || \(name)::text || '|'"
            case .boolean: field = "'i' || CASE WHEN \(name) THEN '1' ELSE '0' END || '|'"
            case .bytes: field = "'b' || encode(\(name), 'hex') || '|'"
            case .text: field = "'t' || octet_length(\(name))::text || ':' || \(name) || '|'"
            }
            return "coalesce(\(field), 'n|')"
        }
        let rowText = fields.isEmpty ? "''" : fields.joined(separator: " || ")
        let leading = "('x' || encode(substring(sha256(convert_to(\(rowText), 'UTF8')) FROM 1 FOR 8), 'hex'))::bit(64)::bigint::numeric"
        let modulus = "18446744073709551616"
        return "(mod(mod(coalesce(sum(\(leading)), 0), \(modulus)) + \(modulus), \(modulus)))::text"
    }
}

/// A table or column name as an SQL identifier, quoted (names come from the databases' own
/// catalogues, but quoting keeps any name a name).
private func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
