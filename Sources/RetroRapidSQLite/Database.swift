import CSQLite3
import Foundation
import RetroRapidSQL

/// One SQLite connection to one database file.
///
/// Threading: a `Database` is used from one thread (or one serial queue) at a time: the storage
/// thread owns the server's connection, and no SQLite call runs on the libwebsockets service
/// thread. That is why it opens with `SQLITE_OPEN_NOMUTEX`: SQLite's per-connection mutex would
/// only guard against a sharing we never do. The class is deliberately not `Sendable`, so the
/// Swift 6 compiler refuses to share it across threads. Other threads or processes (a CLI
/// backup, a test's writer) open connections of their own; WAL lets them read while one writes.
public final class Database {
    /// `PRAGMA synchronous` levels.
    ///
    /// `.full` (the default) syncs the WAL on every commit, so a transaction that returned is on
    /// disk even after a power loss: nothing acknowledged is lost (docs/OPERATIONS.md). `.normal` under
    /// WAL is still safe from corruption and from an application crash, and commits faster, but
    /// a power loss or OS crash can lose the last transactions before a checkpoint. Choose it
    /// only where that loss is acceptable (benchmarks, throwaway data).
    public enum Synchronous: String, Sendable {
        case off = "OFF", normal = "NORMAL", full = "FULL", extra = "EXTRA"
    }

    /// `BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE`. Writers use `.immediate`: it takes the write lock at
    /// BEGIN, waiting up to the busy timeout, instead of failing with `SQLITE_BUSY` halfway
    /// through when a read transaction cannot be upgraded.
    public enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED", immediate = "IMMEDIATE", exclusive = "EXCLUSIVE"
    }

    /// SQLite's process-wide settings, made once before the first connection opens (they must
    /// come before SQLite initialises): no memory statistics, whose global mutex every
    /// allocation took (a checkpoint row's insert makes several; docs/BENCHMARKS.md).
    private static let processConfiguration: Void = {
        _ = rr_sqlite_disable_memory_statistics()
    }()

    /// The path given at open (`:memory:` for a memory database).
    public let path: String
    /// How long a call waits on another connection's lock before failing with `SQLITE_BUSY`.
    public let busyTimeoutMilliseconds: Int
    let handle: OpaquePointer

    /// Opens (creating if needed) the database at `path`, in WAL mode with foreign keys on.
    ///
    /// - Parameters:
    ///   - createParentDirectories: create missing folders above the file first (a fresh
    ///     checkout has no `data/`).
    ///   - busyTimeoutMilliseconds: how long to wait on another connection's lock.
    ///   - synchronous: see ``Synchronous``; `.full` unless you accept losing recent commits.
    public init(
        path: String,
        createParentDirectories: Bool = false,
        busyTimeoutMilliseconds: Int = 5000,
        synchronous: Synchronous = .full
    ) throws {
        if createParentDirectories, path != ":memory:", !path.isEmpty {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        _ = Self.processConfiguration
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let result = sqlite3_open_v2(path, &connection, flags, nil)
        guard result == SQLITE_OK, let connection else {
            // SQLite usually hands back a connection even when open fails; it must be closed.
            let error = DatabaseError(connection: connection, code: result, sql: nil)
            sqlite3_close_v2(connection)
            throw DatabaseError(extendedCode: error.extendedCode, message: "cannot open \(path): \(error.message)")
        }
        self.handle = connection
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        // From here on, deinit closes the connection if a pragma below throws.
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, Int32(clamping: busyTimeoutMilliseconds))
        try execute(sql: "PRAGMA foreign_keys = ON")
        try execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
        let mode = try prepare("PRAGMA journal_mode = WAL").query { $0.string(at: 0) }.first ?? ""
        // A memory database cannot use WAL; a file that refuses it would silently lose the
        // concurrent reads and the durability the rest of the code counts on.
        guard mode.lowercased() == "wal" || path == ":memory:" || path.isEmpty else {
            throw DatabaseError(extendedCode: .error, message: "\(path) refused journal_mode=WAL (it stays '\(mode)')")
        }
    }

    deinit {
        // close_v2 defers the close until the last statement is finalized, so it cannot fail
        // with SQLITE_BUSY; statements also keep their Database alive, so there are none here.
        sqlite3_close_v2(handle)
    }

    /// Runs a script of one or more statements that return no rows we need (schema, pragmas).
    /// Use ``prepare(_:)`` for anything that takes values: scripts cannot bind them.
    public func execute(sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard result == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(result))
            throw DatabaseError(extendedCode: ResultCode(rawValue: result), message: text, sql: sql)
        }
    }

    /// Compiles exactly one SQL statement. More than one is refused rather than silently
    /// dropping the rest, which is what `sqlite3_prepare` alone would do.
    public func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        var hasMoreSQL = false
        let result: Int32 = sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            let result = sqlite3_prepare_v2(handle, start, -1, &statement, &tail)
            // Compile whatever follows the first statement: OK with no statement means only
            // spaces or comments follow.
            if result == SQLITE_OK, let tail, tail.pointee != 0 {
                var extra: OpaquePointer?
                hasMoreSQL = sqlite3_prepare_v2(handle, tail, -1, &extra, nil) != SQLITE_OK || extra != nil
                sqlite3_finalize(extra)
            }
            return result
        }
        guard result == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw DatabaseError(connection: handle, code: result, sql: sql)
        }
        guard !hasMoreSQL else {
            sqlite3_finalize(statement)
            throw DatabaseError.misuse("prepare takes one statement; use execute(sql:) for scripts", sql: sql)
        }
        guard let statement else {
            throw DatabaseError.misuse("no SQL statement to prepare", sql: sql)
        }
        return Statement(database: self, handle: statement)
    }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// True outside an explicit transaction.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` inside one transaction: commits when it returns, rolls back when it throws.
    ///
    /// It does not nest: called inside another transaction it throws (`SQLITE_MISUSE`) without
    /// touching the outer one, because SQLite has no nested BEGIN and a savepoint would make an
    /// inner "commit" that the outer rollback silently undoes. The one exception is a unit of
    /// `group`, whose caller answers nobody before the group commits: there it is a savepoint.
    /// It is `throws`, not `rethrows`: BEGIN and COMMIT themselves can fail (busy, disk full).
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: (Database) throws -> T) throws -> T {
        if groupCommit.isRunning { return try groupCommit.savepoint(on: self) { try body(self) } }
        guard !isInTransaction else {
            throw DatabaseError.misuse("transaction(\(kind)) called inside an open transaction; do the work in the outer one")
        }
        try execute(sql: "BEGIN \(kind.rawValue) TRANSACTION")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollbackIfOpen()
            throw error
        }
        // Some errors (disk full, I/O) make SQLite roll back on its own; a caller that caught
        // one inside the body must not believe its work was committed.
        guard isInTransaction else {
            throw DatabaseError(extendedCode: .abort, message: "SQLite rolled the transaction back after an earlier error; nothing was committed")
        }
        do {
            try execute(sql: "COMMIT TRANSACTION")
        } catch {
            rollbackIfOpen()
            throw error
        }
        return value
    }

    /// Group commit (docs/STORAGE.md, "Group commit"): runs `count` units of work in one
    /// IMMEDIATE transaction, each in a savepoint of its own, and commits once. A unit that
    /// throws has only its own work rolled back, and its error is its entry in the answer (nil
    /// for the units that succeeded); `transaction` inside a unit is a nested savepoint.
    ///
    /// Throws, with nothing committed, when BEGIN or COMMIT fails or a unit's error made SQLite
    /// roll back the whole transaction (disk full, I/O): the caller then runs each unit alone.
    /// Units run in order, so each sees the work of those before it, as if run one by one.
    public func group(_ count: Int, _ unit: (Int) throws -> Void) throws -> [(any Error)?] {
        guard !isInTransaction, !groupCommit.isRunning else {
            throw DatabaseError.misuse("group called inside an open transaction")
        }
        return try groupCommit.run(count, on: self, begin: "BEGIN IMMEDIATE TRANSACTION", commit: "COMMIT TRANSACTION", unit)
    }

    /// The savepoint loop behind `group`, shared with the PostgreSQL backend.
    private let groupCommit = GroupCommit()

    private func rollbackIfOpen() {
        // The error being thrown is the one that matters; a failed ROLLBACK still ends the
        // transaction (SQLite rolls back when the connection closes at the latest).
        if isInTransaction { try? execute(sql: "ROLLBACK TRANSACTION") }
    }

    /// Copies the whole database into the file at `path`, replacing its content, while other
    /// connections keep reading and writing.
    ///
    /// Consistent: the copy is one snapshot, because it runs inside a read transaction on this
    /// connection (under WAL, writers carry on past it, and the copy does not restart when they
    /// commit). Copies `pagesPerStep` pages at a time, sleeping briefly when the destination is
    /// busy or locked, up to the busy timeout. The destination is written in one transaction of
    /// its own, so a crash mid-copy leaves its previous content, never half a backup.
    /// `progress` gets the pages copied so far and the total after every step.
    public func backup(
        to path: String,
        pagesPerStep: Int = 1024,
        progress: (_ copiedPages: Int, _ totalPages: Int) -> Void = { _, _ in }
    ) throws {
        guard !isInTransaction else {
            throw DatabaseError.misuse("backup(to:) called inside an open transaction")
        }
        let sameFile = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath()
            == URL(fileURLWithPath: self.path).standardizedFileURL.resolvingSymlinksInPath()
        guard !sameFile else {
            throw DatabaseError.misuse("backup(to:) was given the database's own file \(path)")
        }
        var destination: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let opened = sqlite3_open_v2(path, &destination, flags, nil)
        defer { sqlite3_close_v2(destination) }
        guard opened == SQLITE_OK, let destination else {
            let error = DatabaseError(connection: destination, code: opened, sql: nil)
            throw DatabaseError(extendedCode: error.extendedCode, message: "cannot open backup file \(path): \(error.message)")
        }
        sqlite3_busy_timeout(destination, Int32(clamping: busyTimeoutMilliseconds))

        // Reading a table starts the snapshot; BEGIN alone does not.
        try execute(sql: "BEGIN DEFERRED TRANSACTION; SELECT count(*) FROM sqlite_schema")
        defer { rollbackIfOpen() }

        guard let backup = sqlite3_backup_init(destination, "main", handle, "main") else {
            throw DatabaseError(connection: destination, sql: nil)
        }
        var result: Int32
        var waitedMilliseconds = 0
        while true {
            result = sqlite3_backup_step(backup, Int32(clamping: pagesPerStep))
            let primary = result & 0xFF
            if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
                guard waitedMilliseconds < busyTimeoutMilliseconds else { break }
                usleep(10_000)
                waitedMilliseconds += 10
                continue
            }
            waitedMilliseconds = 0
            guard result == SQLITE_OK || result == SQLITE_DONE else { break }
            let total = Int(sqlite3_backup_pagecount(backup))
            progress(total - Int(sqlite3_backup_remaining(backup)), total)
            if result == SQLITE_DONE { break }
        }
        // finish releases the backup even after a failed step; read the step's error first.
        let stepError = result == SQLITE_DONE ? nil : DatabaseError(connection: destination, code: result, sql: nil)
        let finished = sqlite3_backup_finish(backup)
        if let stepError {
            throw DatabaseError(extendedCode: stepError.extendedCode, message: "backup to \(path) failed: \(stepError.message)")
        }
        guard finished == SQLITE_OK else {
            throw DatabaseError(connection: destination, code: finished, sql: nil)
        }
    }

    /// Runs `body` with BEGIN, COMMIT, ROLLBACK, SAVEPOINT and RELEASE refused when prepared.
    /// The migrator uses it so a migration file cannot end the transaction it runs in.
    func withTransactionControlDenied<T>(_ body: () throws -> T) rethrows -> T {
        sqlite3_set_authorizer(handle, { _, action, _, _, _, _ in
            action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT ? SQLITE_DENY : SQLITE_OK
        }, nil)
        defer { sqlite3_set_authorizer(handle, nil, nil) }
        return try body()
    }
}

/// Group commit's view of the connection (`GroupCommit`): SQLite either keeps a transaction
/// usable or ends it whole (disk full, I/O), so "exists" and "usable" are one question.
extension Database: GroupCommitConnection {
    public func executeGroupStatement(_ sql: String) throws { try execute(sql: sql) }
    public var groupTransactionExists: Bool { isInTransaction }
    public var groupTransactionIsUsable: Bool { isInTransaction }
    public func errorSpoilsGroup(_ error: any Error) -> Bool { false }
    public func groupTransactionLost() -> any Error {
        DatabaseError(extendedCode: .abort, message: "SQLite rolled the group's transaction back after an earlier error; nothing was committed")
    }
    public func rollBackGroup() { rollbackIfOpen() }
}
