import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

@Suite struct StatementTests {
    @Test func sixtyFourBitIntegersRoundTrip() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE numbers (id INTEGER PRIMARY KEY, value INTEGER NOT NULL) STRICT")
            let insert = try db.prepare("INSERT INTO numbers (value) VALUES (?)")
            let values: [Int64] = [Int64.max, Int64.min, 1 << 40, Int64(Int32.max) + 1, -1]
            for value in values { try insert.execute([value]) }
            try insert.execute([Int.max])

            let read = try db.prepare("SELECT value FROM numbers ORDER BY id").query { $0.int64(at: 0) }
            #expect(read == values + [Int64(Int.max)])
            let asInt = try db.prepare("SELECT value FROM numbers ORDER BY id").query { $0.int(at: 0) }
            #expect(asInt.first == Int.max)
        }
    }

    @Test func textWithEmbeddedNulAndEmojiKeepsItsLength() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE notes (body TEXT NOT NULL) STRICT")
            let text = "left\u{0}right 🏎️💨 café"
            try db.prepare("INSERT INTO notes (body) VALUES (?)").execute([text])

            #expect(try db.prepare("SELECT body FROM notes").query { $0.string(at: 0) } == [text])
            // The bytes SQLite stored, not where a C string would stop.
            #expect(try db.scalar("SELECT length(CAST(body AS BLOB)) FROM notes") == .integer(Int64(text.utf8.count)))
        }
    }

    @Test func emptyStringIsTextNotNull() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE notes (body TEXT) STRICT")
            try db.prepare("INSERT INTO notes (body) VALUES (?)").execute([""])
            #expect(try db.scalar("SELECT typeof(body) FROM notes") == .text("text"))
        }
    }

    @Test func blobWithZeroBytesKeepsItsLength() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE blobs (id INTEGER PRIMARY KEY, bytes BLOB) STRICT")
            let bytes: [UInt8] = [0, 0, 7, 0, 255, 0]
            let insert = try db.prepare("INSERT INTO blobs (bytes) VALUES (?)")
            try insert.execute([bytes])
            try insert.execute([DatabaseValue.blob(bytes)])
            try insert.execute([[UInt8]()])

            let read = try db.prepare("SELECT bytes FROM blobs ORDER BY id").query { $0.blob(at: 0) }
            #expect(read == [bytes, bytes, []])
            #expect(try db.column("SELECT length(bytes) FROM blobs ORDER BY id") == [.integer(6), .integer(6), .integer(0)])
            // An empty blob is still a blob: binding a NULL pointer would have stored NULL.
            #expect(try db.column("SELECT typeof(bytes) FROM blobs ORDER BY id") == [.text("blob"), .text("blob"), .text("blob")])
        }
    }

    @Test func everyKindOfValueRoundTripsByName() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE mixed (i INTEGER, r REAL, t TEXT, b BLOB, flag INTEGER, missing TEXT) STRICT")
            let missing: String? = nil
            let insert = try db.prepare("INSERT INTO mixed VALUES (:i, :r, :t, :b, :flag, :missing)")
            try insert.bind(named: [":i": 42, ":r": 2.5, ":t": "hi", ":b": [UInt8]([1, 2]), ":flag": true, ":missing": missing])
            try insert.execute()

            let row = try db.prepare("SELECT * FROM mixed").query { row in (0..<row.columnCount).map { row.value(at: $0) } }
            #expect(row == [[.integer(42), .real(2.5), .text("hi"), .blob([1, 2]), .integer(1), .null]])
            let flags = try db.prepare("SELECT flag, missing FROM mixed").query { ($0.bool(at: 0), $0.isNull(at: 1)) }
            #expect(flags.first?.0 == true)
            #expect(flags.first?.1 == true)
        }
    }

    @Test func unknownParameterNameIsAnError() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            let statement = try db.prepare("SELECT :known")
            #expect(throws: DatabaseError.self) { try statement.bind(1, named: ":unknown") }
        }
    }

    @Test func valueCountMustMatchParameterCount() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            let statement = try db.prepare("SELECT ?, ?")
            #expect(throws: DatabaseError.self) { try statement.bind([1]) }
            #expect(throws: DatabaseError.self) { try statement.bind([1, 2, 3]) }
            #expect(try statement.query([1, 2]) { $0.int(at: 1) } == [2])
        }
    }

    @Test func preparedStatementIsReusedWithNewValues() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE names (name TEXT NOT NULL) STRICT")
            let insert = try db.prepare("INSERT INTO names VALUES (?)")
            for name in ["ada", "grace", "linus"] { try insert.execute([name]) }
            let select = try db.prepare("SELECT name FROM names WHERE name > ? ORDER BY name")
            #expect(try select.query(["b"]) { $0.string(at: 0) } == ["grace", "linus"])
            #expect(try select.query(["h"]) { $0.string(at: 0) } == ["linus"])
        }
    }

    /// `bind(_ values:)` binds every parameter anew (it no longer clears them first), and the
    /// one-value binds keep what a reset leaves: a value is never left over from the run
    /// before unless it was meant to be, and a bind that failed half-way runs nothing.
    @Test func everyRunBindsItsOwnValuesAndNullIsBoundToo() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE pairs (id INTEGER PRIMARY KEY, name TEXT, count INTEGER) STRICT")
            let insert = try db.prepare("INSERT INTO pairs (name, count) VALUES (?, ?)")
            try insert.execute(["ada", 1])
            try insert.execute([DatabaseValue.null, 2])
            #expect(throws: DatabaseError.self) { try insert.execute(["left over"]) }
            // The statement's own one-value binds: the count bound once serves two runs.
            try insert.bindInteger(7, at: 2)
            try insert.bindText("grace", at: 1)
            try insert.execute()
            try insert.bindText("linus", at: 1)
            try insert.execute()
            let rows = try db.prepare("SELECT name, count FROM pairs ORDER BY id").query { [$0.value(at: 0), $0.value(at: 1)] }
            #expect(rows == [[.text("ada"), .integer(1)], [.null, .integer(2)],
                             [.text("grace"), .integer(7)], [.text("linus"), .integer(7)]])
        }
    }

    @Test func stepReportsRowsOneByOne() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            let statement = try db.prepare("SELECT 1 UNION ALL SELECT 2")
            #expect(try statement.step())
            #expect(statement.int(at: 0) == 1)
            #expect(try statement.step())
            #expect(try statement.step() == false)
            statement.reset()
            #expect(try statement.step())
            #expect(statement.columnName(at: 0) == "1")
        }
    }

    @Test func prepareRefusesASecondStatement() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE t (x INTEGER) STRICT")
            let error = #expect(throws: DatabaseError.self) { try db.prepare("INSERT INTO t VALUES (1); DROP TABLE t") }
            #expect(error?.message.contains("one statement") == true)
            #expect(throws: DatabaseError.self) { try db.prepare("SELECT 1; SELECT") }
            // Trailing spaces and comments are not a statement.
            _ = try db.prepare("SELECT 1;  -- done\n")
            #expect(throws: DatabaseError.self) { try db.prepare("  -- nothing\n") }
        }
    }
}
