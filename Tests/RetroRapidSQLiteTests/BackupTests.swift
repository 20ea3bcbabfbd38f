import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

@Suite struct BackupTests {
    /// Creates `items` with `batches` batches of two rows, each row with a 500-byte payload so
    /// the database spans many pages and the backup takes many steps.
    func fill(_ db: Database, batches: Range<Int>) throws {
        try db.transaction(.immediate) { db in
            let insert = try db.prepare("INSERT INTO items (batch, part, payload) VALUES (?, ?, ?)")
            for batch in batches {
                for part in 1...2 { try insert.execute([batch, part, [UInt8](repeating: UInt8(batch % 251), count: 500)]) }
            }
        }
    }

    func createItems(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, batch INTEGER NOT NULL, part INTEGER NOT NULL, payload BLOB NOT NULL) STRICT")
    }

    @Test func backupIsAnIntactCopyWithTheRows() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try createItems(db)
            try fill(db, batches: 0..<300)
            let backupPath = folder.appendingPathComponent("backup.sqlite").path
            var steps = 0
            try db.backup(to: backupPath, pagesPerStep: 16) { _, _ in steps += 1 }
            #expect(steps > 1)

            let copy = try Database(path: backupPath)
            #expect(try copy.column("PRAGMA integrity_check") == [.text("ok")])
            #expect(try copy.scalar("SELECT count(*) FROM items") == .integer(600))
            #expect(try copy.scalar("SELECT sum(length(payload)) FROM items") == .integer(300_000))
            #expect(try copy.dump() == db.dump())
        }
    }

    @Test func backupReplacesAnOlderBackup() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try createItems(db)
            try fill(db, batches: 0..<10)
            let backupPath = folder.appendingPathComponent("backup.sqlite").path
            try db.backup(to: backupPath)
            try fill(db, batches: 10..<20)
            try db.backup(to: backupPath)
            #expect(try Database(path: backupPath).scalar("SELECT count(*) FROM items") == .integer(40))
        }
    }

    @Test func backupInsideATransactionOrOntoItselfIsRefused() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            let path = folder.appendingPathComponent("backup.sqlite").path
            try db.transaction { db in
                #expect(throws: DatabaseError.self) { try db.backup(to: path) }
            }
            let ownFile = folder.appendingPathComponent("./test.sqlite").path
            #expect(throws: DatabaseError.self) { try db.backup(to: ownFile) }
        }
    }

    /// The operator's backup runs while the server keeps writing through its own connection.
    /// Each writer transaction inserts a batch of two rows; the copy must be one snapshot: every
    /// batch whole, nothing committed after the copy began, and the writer never blocked.
    @Test func backupWhileAnotherConnectionKeepsInsertingIsAConsistentSnapshot() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("test.sqlite").path
            let db = try Database(path: path)
            try createItems(db)
            try fill(db, batches: 0..<400)

            let committedBatches = Locked(400)
            let stop = Locked(false)
            let writerFailure = Locked<String?>(nil)
            let writerDone = DispatchSemaphore(value: 0)
            let writer = Thread {
                defer { writerDone.signal() }
                do {
                    let connection = try Database(path: path)
                    let insert = try connection.prepare("INSERT INTO items (batch, part, payload) VALUES (?, ?, ?)")
                    while !stop.withLock({ $0 }) {
                        let batch = committedBatches.withLock { $0 }
                        try connection.transaction(.immediate) { _ in
                            for part in 1...2 { try insert.execute([batch, part, [UInt8](repeating: 1, count: 500)]) }
                        }
                        committedBatches.withLock { $0 += 1 }
                    }
                } catch {
                    writerFailure.withLock { $0 = "\(error)" }
                }
            }
            writer.start()
            defer {
                stop.withLock { $0 = true }
                writerDone.wait()
            }

            let backupPath = folder.appendingPathComponent("backup.sqlite").path
            var batchesWhenCopyBegan: Int?
            var writerKeptWriting = false
            try db.backup(to: backupPath, pagesPerStep: 8) { _, _ in
                guard batchesWhenCopyBegan == nil else { return }
                // After the first step, hold the copy until the writer has committed more.
                let started = committedBatches.withLock { $0 }
                batchesWhenCopyBegan = started
                let deadline = Date().addingTimeInterval(10)
                while Date() < deadline, writerFailure.withLock({ $0 }) == nil {
                    if committedBatches.withLock({ $0 }) >= started + 5 { writerKeptWriting = true; break }
                    usleep(1_000)
                }
            }
            stop.withLock { $0 = true }

            #expect(writerFailure.withLock { $0 } == nil)
            #expect(writerKeptWriting)
            let copy = try Database(path: backupPath)
            #expect(try copy.column("PRAGMA integrity_check") == [.text("ok")])
            let rows = try copy.scalar("SELECT count(*) FROM items")
            let torn = try copy.scalar("SELECT count(*) FROM (SELECT batch FROM items GROUP BY batch HAVING count(*) <> 2)")
            #expect(torn == .integer(0))
            let began = try #require(batchesWhenCopyBegan)
            guard case .integer(let count) = rows else { Issue.record("no row count"); return }
            #expect(count >= 800)
            #expect(count % 2 == 0)
            // Batches the writer committed while the copy was held are not in it.
            #expect(count <= Int64(began * 2))
        }
    }
}
