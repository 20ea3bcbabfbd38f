import Foundation
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing

/// `PostgresConnection.group`, group commit's PostgreSQL half, against a real server with a
/// second connection looking on: one REPEATABLE READ transaction and one commit for all units,
/// a savepoint for each, and the whole group given up where only a fresh transaction helps.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresGroupCommitTests {
    private struct UnitFailed: Error, Equatable {}

    private func names(_ db: PostgresConnection) throws -> [String] {
        try db.execute("SELECT name FROM t ORDER BY id").map { $0.string(at: 0) }
    }

    private func withTable(_ body: (_ db: PostgresConnection, _ observer: PostgresConnection) throws -> Void) throws {
        try TestPostgres.withDatabase { url in
            let db = try PostgresConnection(conninfo: url)
            try db.execute("CREATE TABLE t (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            try body(db, try PostgresConnection(conninfo: url))
        }
    }

    @Test func aFailingUnitLosesOnlyItsOwnWorkAndTheRestCommitsOnceAtTheEnd() throws {
        try withTable { db, observer throws in
            var seenByObserver: [[String]] = []
            let errors = try db.group(4) { index in
                // A repository's own transaction inside a unit is a savepoint.
                _ = try db.transaction(.repeatableRead) { db in
                    try db.execute("INSERT INTO t (name) VALUES ($1)", ["unit \(index)"])
                }
                seenByObserver.append(try names(observer))
                if index == 1 { throw UnitFailed() }
                // A statement the server refuses (a duplicate) fails only its unit, too.
                if index == 2 { try db.execute("INSERT INTO t (name) VALUES ($1)", ["unit 0"]) }
            }
            #expect(errors.count == 4)
            #expect(errors[0] == nil && errors[3] == nil)
            #expect(errors[1] as? UnitFailed == UnitFailed())
            #expect((errors[2] as? PostgresError)?.isUniqueViolation == true)
            #expect(seenByObserver == [[], [], [], []])
            #expect(try names(observer) == ["unit 0", "unit 3"])
            #expect(!db.isInTransaction)
        }
    }

    @Test func aSerializationFailureGivesTheWholeGroupUpWithNothingCommitted() throws {
        try withTable { db, observer throws in
            try db.execute("INSERT INTO t (name) VALUES ('shared')")
            let error = #expect(throws: PostgresError.self) {
                _ = try db.group(3) { index in
                    switch index {
                    case 0:
                        // The group's snapshot is taken here.
                        try db.execute("INSERT INTO t (name) VALUES ('first')")
                        _ = try db.execute("SELECT count(*) FROM t")
                        // Another connection changes a row after it.
                        try observer.execute("UPDATE t SET name = 'changed' WHERE name = 'shared'")
                    case 1:
                        // Alone, `transaction` would retry this with a fresh snapshot; the
                        // group's cannot change, so the unit's error gives the group up even
                        // though the unit swallows it.
                        _ = try? db.transaction(.repeatableRead) { db in
                            try db.execute("UPDATE t SET name = 'mine' WHERE name = 'shared'")
                        }
                    default:
                        Issue.record("no unit runs after the group is given up")
                    }
                }
            }
            #expect(error?.message.contains("nothing was committed") == true)
            #expect(try names(observer) == ["changed"])
            #expect(!db.isInTransaction)
            // The connection works again, in a group and alone.
            #expect(try db.group(1) { _ in try db.execute("INSERT INTO t (name) VALUES ('after')") }.count == 1)
            #expect(try names(observer) == ["changed", "after"])
        }
    }

    @Test func aSerializableTransactionInsideAGroupGivesTheGroupUp() throws {
        try withTable { db, observer throws in
            #expect(throws: PostgresError.self) {
                _ = try db.group(2) { index in
                    try db.execute("INSERT INTO t (name) VALUES ($1)", ["u\(index)"])
                    if index == 1 { try db.transaction(.serializable) { _ in } }
                }
            }
            #expect(try names(observer).isEmpty)
        }
    }

    @Test func aGroupInsideATransactionIsRefusedAndTheTransactionIsUntouched() throws {
        try withTable { db, observer throws in
            try db.transaction { db in
                try db.execute("INSERT INTO t (name) VALUES ('outer')")
                #expect(throws: PostgresError.self) { _ = try db.group(1) { _ in } }
                #expect(db.isInTransaction)
            }
            #expect(try names(observer) == ["outer"])
        }
    }
}
