import CLibPQ
import Foundation
import RetroRapidSQL

/// One connection to a PostgreSQL server through libpq, in blocking mode.
///
/// Threading rule: a connection is used from one thread at a time, a storage thread of the
/// server (or a command's main thread), never the libwebsockets service thread: every call here
/// waits on the network. It is deliberately not `Sendable`.
///
/// Statements are prepared once per connection and reused (the SQL text is the key), with
/// parameters bound as `$1, $2…`; no value is ever spliced into SQL.
public final class PostgresConnection {
    /// The connection string as given (a `postgres://` URL or `key=value` pairs).
    private let conninfo: String
    private var handle: OpaquePointer
    /// Prepared statements by SQL text; forgotten when the connection is re-established.
    private var prepared: [String: String] = [:]

    /// Isolation levels a transaction can ask for.
    public enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// Connects, or throws what libpq said. `connect_timeout` defaults to 10 s unless the URL
    /// sets its own; the session uses UTF-8 whatever the server's default.
    public init(conninfo: String) throws {
        self.conninfo = conninfo
        handle = try Self.connect(conninfo)
    }

    deinit {
        PQfinish(handle)
    }

    private static func connect(_ conninfo: String) throws -> OpaquePointer {
        // Defaults first: the expanded URL (dbname) overrides any it also sets.
        let keywords = ["connect_timeout", "client_encoding", "application_name", "dbname"]
        let values = ["10", "UTF8", "retrorapid", conninfo]
        let connection: OpaquePointer? = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else { throw PostgresError(sqlState: "", message: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw PostgresError(sqlState: "", message: "cannot connect: \(message)")
        }
        // libpq prints the server's notices (`relation … already exists, skipping`) on stderr
        // by default; they are informational, and an operator's command output is ours.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        return connection
    }

    /// True while a transaction is open (or failed and not yet rolled back).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// The server process serving this connection (what a notification's sender is named by).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs one statement with parameters and returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [any SQLBindable] = []) throws -> PostgresResult {
        try reconnectIfLost()
        let values = parameters.map(\.sqlValue)
        let name = try statementName(for: sql, values)
        let result = withParameters(values) { pointers, lengths, formats in
            PQexecPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 0)
        }
        return try consume(result, sql: sql)
    }

    /// Runs SQL text that may hold several statements and no parameters (a migration file).
    public func executeScript(_ sql: String) throws {
        try reconnectIfLost()
        _ = try consume(PQexec(handle, sql), sql: sql)
    }

    /// Runs `sql`, a `COPY … FROM STDIN (FORMAT binary)`, with `rows` as its data, and
    /// returns how many rows it wrote. In a transaction it is part of it; a row the server
    /// refuses (a wrong field count, a value its column cannot take) fails the whole COPY.
    @discardableResult
    public func copyIn(_ sql: String, _ rows: PostgresBinaryCopy) throws -> Int {
        try reconnectIfLost()
        // COPY's start answers PGRES_COPY_IN, not a finished result: anything else is an error.
        guard let start = PQexec(handle, sql) else {
            throw PostgresError(sqlState: "", message: String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines), sql: sql)
        }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try consume(start, sql: sql)
            throw PostgresError.misuse("\(sql) is not a COPY FROM STDIN")
        }
        PQclear(start)
        // In blocking mode PQputCopyData answers 1 once the bytes are queued, -1 on a lost
        // connection; the server's verdict on the rows comes with the result after the end.
        let sent = putCopyData(rows.bytes) && putCopyData(PostgresBinaryCopy.trailer)
        let ended = PQputCopyEnd(handle, sent ? nil : "the rows could not be sent") == 1
        // Every result of the COPY is read, so the connection is ready for the next statement.
        var failure: (any Error)?
        var written = 0
        while let result = PQgetResult(handle) {
            do {
                written = try consume(result, sql: sql).affectedRows
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        guard sent && ended else {
            throw PostgresError(sqlState: "08006", message: "COPY not sent: \(String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))", sql: sql)
        }
        return written
    }

    /// Queues `bytes` of a COPY's data in pieces of at most a MiB (a length libpq takes as
    /// an Int32 never overflows). False when the connection is lost.
    private func putCopyData(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var start = 0
                while start < characters.count {
                    let count = min(1 << 20, characters.count - start)
                    guard PQputCopyData(handle, characters.baseAddress! + start, Int32(count)) == 1 else { return false }
                    start += count
                }
                return true
            }
        }
    }

    /// Runs `body` in a transaction at `isolation` and commits it. When the server aborts it
    /// to keep that isolation (a serialization failure) or to break a deadlock, the whole
    /// transaction runs again, up to `attempts` times in all, after a short random pause: the
    /// body must only read and write through this connection, so running it again is safe.
    /// Any other error rolls back and is rethrown. Not nestable: the body does its work in the
    /// one transaction. Inside a unit of `group` it is a savepoint of the group's transaction.
    public func transaction<T>(_ isolation: Isolation = .readCommitted, attempts: Int = 10,
                               _ body: (PostgresConnection) throws -> T) throws -> T {
        if groupCommit.isRunning {
            // The group runs at REPEATABLE READ; a stronger level cannot be had inside it.
            guard isolation != .serializable else {
                groupCommit.spoil()
                throw PostgresError.misuse("a SERIALIZABLE transaction cannot run inside a group")
            }
            return try groupCommit.savepoint(on: self) { try body(self) }
        }
        guard !isInTransaction else {
            throw PostgresError.misuse("transaction() called inside an open transaction; do the work in the outer one")
        }
        var attempt = 1
        while true {
            do {
                try executeScript("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
                let value = try body(self)
                try executeScript("COMMIT")
                return value
            } catch let error as PostgresError where error.isRetryable && attempt < attempts {
                rollbackIfOpen()
                attempt += 1
                usleep(UInt32.random(in: 1_000...(5_000 * UInt32(attempt))))
            } catch {
                rollbackIfOpen()
                throw error
            }
        }
    }

    /// Group commit (docs/STORAGE.md, "Group commit"): runs `count` units of work in one
    /// REPEATABLE READ transaction (the level the repositories ask for; READ COMMITTED work sees
    /// the one snapshot too), each in a savepoint of its own, and commits once. A unit that
    /// throws has only its own work rolled back, and its error is its entry in the answer (nil
    /// for the units that succeeded); `transaction` inside a unit is a nested savepoint.
    ///
    /// Throws, with nothing committed, when BEGIN or COMMIT fails, the connection is lost, or a
    /// unit met a serialization failure or deadlock (which, alone, `transaction` would retry
    /// with a fresh snapshot, but the group's snapshot cannot change): the caller then runs each
    /// unit alone. Units run in order, so each sees the work of those before it.
    public func group(_ count: Int, _ unit: (Int) throws -> Void) throws -> [(any Error)?] {
        guard !isInTransaction, !groupCommit.isRunning else {
            throw PostgresError.misuse("group called inside an open transaction")
        }
        return try groupCommit.run(count, on: self, begin: "BEGIN ISOLATION LEVEL \(Isolation.repeatableRead.rawValue)",
                                   commit: "COMMIT", unit)
    }

    /// The savepoint loop behind `group`, shared with the SQLite backend.
    private let groupCommit = GroupCommit()

    private func rollbackIfOpen() {
        // The error being thrown is the one that matters; a connection that failed mid-way
        // has no transaction left to roll back.
        if isInTransaction, PQstatus(handle) == CONNECTION_OK { try? executeScript("ROLLBACK") }
    }

    /// A lost connection (the server restarted, say) is made again before the next statement,
    /// never inside a transaction, whose work would then be half gone.
    private func reconnectIfLost() throws {
        guard PQstatus(handle) != CONNECTION_OK else { return }
        // Inside a group the work done so far is gone with the connection: a new one would
        // run the rest outside any transaction.
        if groupCommit.isRunning {
            groupCommit.spoil()
            throw PostgresError(sqlState: "08006", message: "connection lost inside a group; nothing was committed")
        }
        PQreset(handle)
        prepared.removeAll()
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            throw PostgresError(sqlState: "", message: "connection lost and not re-established: \(message)")
        }
    }

    private func statementName(for sql: String, _ values: [SQLValue]) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "rr\(prepared.count + 1)"
        var types = values.map(\.postgresTypeOID)
        let result = PQprepare(handle, name, sql, Int32(types.count), &types)
        _ = try consume(result, sql: sql)
        prepared[sql] = name
        return name
    }

    /// Frees the result, returning its rows or throwing its error.
    private func consume(_ result: OpaquePointer?, sql: String) throws -> PostgresResult {
        guard let result else {
            throw PostgresError(sqlState: "", message: String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines), sql: sql)
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(result)
        default:
            func field(_ code: UInt8) -> String? {
                PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
            }
            let message = field(UInt8(ascii: "M")) ?? String(cString: PQresultErrorMessage(result))
            throw PostgresError(sqlState: field(UInt8(ascii: "C")) ?? "", message: message,
                                constraint: field(UInt8(ascii: "n")), sql: sql)
        }
    }

    // MARK: - Notifications (LISTEN/NOTIFY)

    /// The connection's socket, to wait on with poll(2) for notifications.
    public var socketDescriptor: Int32 { PQsocket(handle) }

    /// Reads what the server sent without blocking and returns the notifications received,
    /// oldest first. Throws when the connection is gone.
    public func takeNotifications() throws -> [PostgresNotification] {
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(sqlState: "", message: "connection lost: \(String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        var notifications: [PostgresNotification] = []
        while let notice = PQnotifies(handle) {
            notifications.append(PostgresNotification(channel: String(cString: notice.pointee.relname),
                                                      payload: String(cString: notice.pointee.extra),
                                                      senderPID: notice.pointee.be_pid))
            PQfreemem(notice)
        }
        return notifications
    }
}

/// One NOTIFY received on a channel this connection LISTENs to.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String
    /// The server process of the connection that sent it.
    public let senderPID: Int32
}

/// Calls `body` with the values as libpq wants them: C strings for text, raw bytes (binary
/// format) for `bytea`, a null pointer for NULL. The buffers live until `body` returns.
private func withParameters<R>(_ values: [SQLValue],
                               _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
    var buffers: [UnsafeMutablePointer<CChar>?] = []
    var lengths: [Int32] = []
    var formats: [Int32] = []
    buffers.reserveCapacity(values.count)
    for value in values {
        let bytes: [UInt8]?
        var binary = false
        switch value {
        case .null: bytes = nil
        case .text(let text): bytes = Array(text.utf8)
        case .integer(let number): bytes = Array(String(number).utf8)
        // A real number as its text: the server reads it into the column's type.
        case .real(let number): bytes = Array(String(number).utf8)
        case .boolean(let flag): bytes = Array((flag ? "t" : "f").utf8)
        case .bytes(let raw): bytes = raw; binary = true
        }
        if let bytes {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { buffer.initialize(from: $0.baseAddress!, count: bytes.count) }
            }
            buffer[bytes.count] = 0
            buffers.append(buffer)
        } else {
            buffers.append(nil)
        }
        lengths.append(Int32(bytes?.count ?? 0))
        formats.append(binary ? 1 : 0)
    }
    defer { for buffer in buffers { buffer?.deallocate() } }
    return buffers.withUnsafeBufferPointer { pointers in
        pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constPointers in
            body(constPointers.baseAddress, lengths, formats)
        }
    }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// Group commit's view of the connection (`GroupCommit`): a statement that fails leaves the
/// transaction there but failed (only a rollback to a savepoint gets past it), and a
/// serialization failure, deadlock or lost connection spoils the whole group.
extension PostgresConnection: GroupCommitConnection {
    public func executeGroupStatement(_ sql: String) throws { try executeScript(sql) }
    public var groupTransactionExists: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }
    public var groupTransactionIsUsable: Bool { PQtransactionStatus(handle) == PQTRANS_INTRANS }
    public func errorSpoilsGroup(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.isRetryable || error.isConnectionFailure
    }
    public func groupTransactionLost() -> any Error {
        PostgresError(sqlState: "", message: "the group's transaction failed; nothing was committed")
    }
    public func rollBackGroup() { rollbackIfOpen() }
}
