import Foundation
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// `Database.group`, group commit's SQLite half, against a real file with a second connection
/// looking on: one transaction and one commit for all units, a savepoint for each.
@Suite struct DatabaseGroupTests {
    private struct UnitFailed: Error, Equatable {}

    private func names(_ db: Database) throws -> [String] {
        try db.prepare("SELECT name FROM t ORDER BY id").query { $0.string(at: 0) }
    }

    private func withTable(_ body: (_ db: Database, _ observer: Database) throws -> Void) throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            try body(db, try openDatabase(in: folder))
        }
    }

    @Test func aFailingUnitLosesOnlyItsOwnWorkAndTheRestCommitsOnceAtTheEnd() throws {
        try withTable { db, observer throws in
            let insert = try db.prepare("INSERT INTO t (name) VALUES (?)")
            var seenByObserver: [[String]] = []
            let errors = try db.group(3) { index in
                // A repository's own transaction inside a unit (here, a nested one) is a savepoint.
                try db.transaction(.immediate) { _ in try insert.execute(["unit \(index)"]) }
                seenByObserver.append(try names(observer))
                if index == 1 { throw UnitFailed() }
            }
            #expect(errors.count == 3)
            #expect(errors[0] == nil && errors[2] == nil)
            #expect(errors[1] as? UnitFailed == UnitFailed())
            // Nothing was visible to another connection before the one commit.
            #expect(seenByObserver == [[], [], []])
            #expect(try names(observer) == ["unit 0", "unit 2"])
            #expect(!db.isInTransaction)
        }
    }

    @Test func eachUnitSeesTheWorkOfThoseBeforeIt() throws {
        try withTable { db, _ throws in
            var counts: [Int] = []
            _ = try db.group(3) { index in
                try db.prepare("INSERT INTO t (name) VALUES (?)").execute(["n\(index)"])
                counts.append(try db.prepare("SELECT count(*) FROM t").query { $0.int(at: 0) }.first ?? -1)
            }
            #expect(counts == [1, 2, 3])
            #expect(try names(db) == ["n0", "n1", "n2"])
        }
    }

    @Test func aUnitThatEndsTheWholeTransactionMakesTheGroupThrowWithNothingCommitted() throws {
        try withTable { db, observer throws in
            var ran: [Int] = []
            #expect(throws: (any Error).self) {
                _ = try db.group(3) { index in
                    ran.append(index)
                    try db.prepare("INSERT INTO t (name) VALUES (?)").execute(["u\(index)"])
                    // What SQLite does on its own after a disk-full or I/O error.
                    if index == 1 { try db.execute(sql: "ROLLBACK") }
                }
            }
            #expect(ran == [0, 1])
            #expect(try names(observer).isEmpty)
            #expect(!db.isInTransaction)
            // The connection is usable again, alone and in a group.
            #expect(try db.group(1) { _ in try db.prepare("INSERT INTO t (name) VALUES ('after')").execute() } .count == 1)
            #expect(try names(observer) == ["after"])
        }
    }

    @Test func aUnitThatSwallowsTheEndOfTheTransactionStillMakesTheGroupThrow() throws {
        try withTable { db, observer throws in
            #expect(throws: (any Error).self) {
                _ = try db.group(2) { index in
                    try db.prepare("INSERT INTO t (name) VALUES (?)").execute(["u\(index)"])
                    if index == 0 { try db.execute(sql: "ROLLBACK") }
                    // The unit carries on as if nothing happened; its release must not pass.
                }
            }
            #expect(try names(observer).isEmpty)
        }
    }

    @Test func aGroupInsideATransactionIsRefusedAndTheTransactionIsUntouched() throws {
        try withTable { db, observer throws in
            try db.transaction(.immediate) { db in
                try db.prepare("INSERT INTO t (name) VALUES ('outer')").execute()
                let error = #expect(throws: DatabaseError.self) { _ = try db.group(1) { _ in } }
                #expect(error?.primaryCode == 21)  // SQLITE_MISUSE
                #expect(db.isInTransaction)
            }
            #expect(try names(observer) == ["outer"])
            // Outside a group a transaction still does not nest.
            try db.transaction(.immediate) { db in
                #expect(throws: DatabaseError.self) { try db.transaction(.immediate) { _ in } }
            }
        }
    }
}
