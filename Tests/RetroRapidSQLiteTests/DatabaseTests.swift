import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

@Suite struct DatabaseTests {
    @Test func opensInWALModeWithForeignKeysAndDefaults() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            #expect(try db.scalar("PRAGMA journal_mode") == .text("wal"))
            #expect(try db.scalar("PRAGMA foreign_keys") == .integer(1))
            #expect(try db.scalar("PRAGMA busy_timeout") == .integer(5000))
            #expect(try db.scalar("PRAGMA synchronous") == .integer(2))  // FULL
        }
    }

    @Test func busyTimeoutAndSynchronousAreSettable() throws {
        try withTemporaryDirectory { folder in
            let db = try Database(path: folder.appendingPathComponent("x.sqlite").path, busyTimeoutMilliseconds: 1234, synchronous: .normal)
            #expect(try db.scalar("PRAGMA busy_timeout") == .integer(1234))
            #expect(try db.scalar("PRAGMA synchronous") == .integer(1))  // NORMAL
        }
    }

    @Test func createsParentFoldersOnlyWhenAsked() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("data/nested/game.sqlite").path
            let error = #expect(throws: DatabaseError.self) { try Database(path: path) }
            #expect(error?.primaryCode == 14)  // SQLITE_CANTOPEN
            #expect(error?.message.contains(path) == true)

            _ = try Database(path: path, createParentDirectories: true)
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func openingSomethingThatIsNotADatabaseFails() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("notes.txt").path
            try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: DatabaseError.self) { try Database(path: path) }
            #expect(error?.primaryCode == 26)  // SQLITE_NOTADB, seen by the pragmas at open
        }
    }

    @Test func lastInsertRowIDAndChanges() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER) STRICT")
            try db.prepare("INSERT INTO t (id, x) VALUES (?, 1)").execute([Int64(1) << 33])
            #expect(db.lastInsertRowID == Int64(1) << 33)
            try db.prepare("INSERT INTO t (x) VALUES (1)").execute()
            try db.prepare("UPDATE t SET x = 2").execute()
            #expect(db.changes == 2)
        }
    }

    @Test func transactionCommitsWhenBodyReturns() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE t (x INTEGER) STRICT")
            let id = try db.transaction(.immediate) { db in
                try db.prepare("INSERT INTO t VALUES (7)").execute()
                return db.lastInsertRowID
            }
            #expect(id == 1)
            #expect(!db.isInTransaction)
            // Another connection sees it: it was committed, not just visible to the writer.
            let other = try openDatabase(in: folder)
            #expect(try other.column("SELECT x FROM t") == [.integer(7)])
        }
    }

    struct Abort: Error {}

    @Test(arguments: [Database.TransactionKind.deferred, .immediate, .exclusive])
    func transactionRollsBackWhenBodyThrows(kind: Database.TransactionKind) throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE t (x INTEGER) STRICT")
            #expect(throws: Abort.self) {
                try db.transaction(kind) { db in
                    try db.prepare("INSERT INTO t VALUES (1)").execute()
                    throw Abort()
                }
            }
            #expect(!db.isInTransaction)
            #expect(try db.column("SELECT x FROM t") == [])
            #expect(try openDatabase(in: folder).column("SELECT x FROM t") == [])
        }
    }

    @Test func nestedTransactionIsRefusedWithoutHarmingTheOuterOne() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE t (x INTEGER) STRICT")
            try db.transaction(.immediate) { db in
                try db.prepare("INSERT INTO t VALUES (1)").execute()
                let error = #expect(throws: DatabaseError.self) {
                    try db.transaction(.immediate) { db in try db.prepare("INSERT INTO t VALUES (2)").execute() }
                }
                #expect(error?.primaryCode == 21)  // SQLITE_MISUSE
                #expect(error?.message.contains("inside an open transaction") == true)
                #expect(db.isInTransaction)
                try db.prepare("INSERT INTO t VALUES (3)").execute()
            }
            #expect(try openDatabase(in: folder).column("SELECT x FROM t ORDER BY x") == [.integer(1), .integer(3)])
        }
    }

    @Test func immediateTransactionHoldsTheWriteLockAgainstOtherConnections() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("test.sqlite").path
            let writer = try Database(path: path)
            let other = try Database(path: path, busyTimeoutMilliseconds: 50)
            try writer.execute(sql: "CREATE TABLE t (x INTEGER) STRICT")
            try writer.transaction(.immediate) { _ throws in
                let error = #expect(throws: DatabaseError.self) {
                    try other.transaction(.immediate) { _ in }
                }
                #expect(error?.isBusy == true)
                // Readers are not blocked under WAL.
                #expect(try other.column("SELECT count(*) FROM t") == [.integer(0)])
            }
            try other.transaction(.immediate) { _ in }
        }
    }

    @Test func scriptErrorCarriesTheScript() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            let script = "CREATE TABLE ok (x INTEGER); CREAT TABLE broken (x)"
            let error = #expect(throws: DatabaseError.self) { try db.execute(sql: script) }
            #expect(error?.sql == script)
            #expect(error?.message.contains("syntax error") == true)
        }
    }
}
