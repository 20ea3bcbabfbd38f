import Foundation
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing

/// The connection against a real server: values there and back, errors with their SQLSTATE,
/// the transaction's retry, and a connection the server dropped.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresConnectionTests {
    @Test func everyKindOfValueGoesThereAndBackUnchanged() throws {
        try TestPostgres.withDatabase { url in
            let db = try PostgresConnection(conninfo: url)
            try db.execute("CREATE TABLE t (i BIGINT, s TEXT, b BOOLEAN, x BYTEA)")
            let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xff, 0x5c, 0x27]
            let text = "Zoë's \"road\" 🏁 $1 \\ ' ; DROP TABLE t; --"
            try db.execute("INSERT INTO t VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)",
                           [Int64.min, text, true, bytes, nil as Int64?, nil as String?, false, [UInt8]()])
            let rows = try db.execute("SELECT i, s, b, x FROM t ORDER BY i NULLS LAST")
            #expect(rows.rows.count == 2)
            let first = try #require(rows.first)
            #expect(first.int64(at: 0) == Int64.min)
            #expect(first.string(at: 1) == text)
            #expect(first.bool(at: 2))
            #expect(first.bytes(at: 3) == bytes)
            let second = rows.map { $0 }[1]
            #expect(second.isNull(at: 0) && second.isNull(at: 1))
            #expect(!second.bool(at: 2))
            #expect(second.bytes(at: 3).isEmpty)
            #expect(try db.execute("UPDATE t SET b = NOT b").affectedRows == 2)
        }
    }

    @Test func aRefusedStatementSaysWhichRuleAndChangesNothing() throws {
        try TestPostgres.withDatabase { url in
            let db = try PostgresConnection(conninfo: url)
            try db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, n BIGINT CHECK (n >= 0))")
            try db.execute("INSERT INTO t VALUES ($1, $2)", ["a", 1])
            let duplicate = #expect(throws: PostgresError.self) { try db.execute("INSERT INTO t VALUES ($1, $2)", ["a", 2]) }
            #expect(duplicate?.isUniqueViolation == true)
            #expect(duplicate?.constraint == "t_pkey")
            let negative = #expect(throws: PostgresError.self) { try db.execute("INSERT INTO t VALUES ($1, $2)", ["b", -1]) }
            #expect(negative?.isCheckViolation == true)
            let inTransaction = #expect(throws: PostgresError.self) {
                try db.transaction { db in
                    try db.execute("INSERT INTO t VALUES ($1, $2)", ["c", 3])
                    try db.execute("INSERT INTO t VALUES ($1, $2)", ["a", 4])
                }
            }
            #expect(inTransaction?.isUniqueViolation == true)
            #expect(!db.isInTransaction)
            #expect(try db.execute("SELECT k FROM t ORDER BY k").map { $0.string(at: 0) } == ["a"])
        }
    }

    /// Two serializable transactions that each read what the other writes: PostgreSQL aborts
    /// one with a serialization failure, and `transaction` runs it again, so both land.
    @Test func aSerializationFailureIsRetriedUntilTheTransactionCommits() throws {
        try TestPostgres.withDatabase { url in
            let setup = try PostgresConnection(conninfo: url)
            try setup.execute("CREATE TABLE counter (n BIGINT NOT NULL)")
            try setup.execute("INSERT INTO counter VALUES (0)")
            let attempts = AttemptCounter()
            let bothRead = DispatchGroup()
            bothRead.enter(); bothRead.enter()
            let failures = AttemptCounter()
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                do {
                    let db = try PostgresConnection(conninfo: url)
                    var first = true
                    try db.transaction(.serializable) { db in
                        attempts.add()
                        let n = try db.execute("SELECT n FROM counter").first!.int64(at: 0)
                        if first { first = false; bothRead.leave(); bothRead.wait() }
                        try db.execute("UPDATE counter SET n = $1", [n + 1])
                    }
                } catch {
                    failures.add()
                }
            }
            #expect(failures.count == 0)
            #expect(attempts.count >= 3, "one of the two must have run again")
            #expect(try setup.execute("SELECT n FROM counter").first!.int64(at: 0) == 2)
        }
    }

    @Test func aConnectionTheServerDroppedIsMadeAgainBeforeTheNextStatement() throws {
        try TestPostgres.withDatabase { url in
            let db = try PostgresConnection(conninfo: url)
            try db.execute("SELECT 1")
            let pid = db.backendPID
            let other = try PostgresConnection(conninfo: url)
            try other.execute("SELECT pg_terminate_backend($1::int)", [Int64(pid)])
            // The first statement after the kill finds the connection gone…
            _ = try? db.execute("SELECT 1")
            // …and the next one runs on a new one.
            #expect(try db.execute("SELECT 41 + $1", [1]).first!.int(at: 0) == 42)
            #expect(db.backendPID != pid)
        }
    }

    @Test func aBadURLIsAClearError() {
        let error = #expect(throws: PostgresError.self) {
            _ = try PostgresConnection(conninfo: "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
        }
        #expect(error?.isConnectionFailure == true)
        #expect(error?.message.contains("cannot connect") == true)
    }

    @Test func notificationsArriveOnTheListeningConnection() throws {
        try TestPostgres.withDatabase { url in
            let listener = try PostgresConnection(conninfo: url)
            try listener.execute("LISTEN retrorapid_test")
            let sender = try PostgresConnection(conninfo: url)
            try sender.execute("SELECT pg_notify($1, $2)", ["retrorapid_test", "hello|1"])
            var received: [PostgresNotification] = []
            for _ in 0..<100 where received.isEmpty {
                received += try listener.takeNotifications()
                if received.isEmpty { usleep(10_000) }
            }
            #expect(received.map(\.payload) == ["hello|1"])
            #expect(received.first?.senderPID == sender.backendPID)
        }
    }
}

private final class AttemptCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}
