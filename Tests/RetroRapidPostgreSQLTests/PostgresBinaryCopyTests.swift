import Foundation
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing

/// Rows written by binary COPY against a real server: every text and every 64-bit number
/// arrives as it was, a refused row writes nothing and leaves the connection usable.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresBinaryCopyTests {
    static let texts = ["", "plain", "Zoë's \"road\" 🏁", "tab\there", "line\nbreak\r\n", "back\\slash \\N", "{\"a\",\"b\"}",
                        ",;'$1", String(repeating: "3L,", count: 40_000)]
    static let numbers: [Int64] = [0, 1, -1, 255, 256, 65_536, Int64(Int32.max) + 1, Int64.max, Int64.min]

    @Test func everyTextAndNumberArrivesUnchanged() throws {
        try TestPostgres.withDatabase { url in
            let db = try PostgresConnection(conninfo: url)
            try db.execute("CREATE TABLE t (n BIGINT NOT NULL, s TEXT NOT NULL, m BIGINT NOT NULL, w TEXT NOT NULL)")
            var rows = PostgresBinaryCopy()
            var expected: [[String]] = []
            for (index, number) in Self.numbers.enumerated() {
                let text = Self.texts[index % Self.texts.count]
                rows.beginRow(fields: 4)
                rows.appendBigint(number)
                rows.appendText(text)
                rows.appendBigint(Int64(index))
                rows.appendText { $0 += Array("written in place \(index)".utf8) }
                expected.append([String(number), text, String(index), "written in place \(index)"])
            }
            #expect(rows.rows == Self.numbers.count)
            #expect(try db.copyIn("COPY t (n, s, m, w) FROM STDIN (FORMAT binary)", rows) == Self.numbers.count)
            let back = try db.execute("SELECT n, s, m, w FROM t ORDER BY m").map { row in (0..<4).map { row.string(at: $0) } }
            #expect(back == expected)
        }
    }

    @Test func aRefusedRowWritesNothingAndTheConnectionGoesOn() throws {
        try TestPostgres.withDatabase { url in
            let db = try PostgresConnection(conninfo: url)
            try db.execute("CREATE TABLE t (n BIGINT NOT NULL CHECK (n >= 0), s TEXT NOT NULL)")
            var good = PostgresBinaryCopy()
            good.beginRow(fields: 2)
            good.appendBigint(1)
            good.appendText("kept")

            // A value its column refuses, after a good row: the whole COPY fails.
            var refused = good
            refused.beginRow(fields: 2)
            refused.appendBigint(-1)
            refused.appendText("refused")
            let check = #expect(throws: PostgresError.self) { try db.copyIn("COPY t (n, s) FROM STDIN (FORMAT binary)", refused) }
            #expect(check?.isCheckViolation == true)

            // A row with fewer fields than the column list.
            var short = PostgresBinaryCopy()
            short.beginRow(fields: 1)
            short.appendBigint(2)
            #expect(throws: PostgresError.self) { try db.copyIn("COPY t (n, s) FROM STDIN (FORMAT binary)", short) }

            // Not a COPY at all.
            #expect(throws: PostgresError.self) { try db.copyIn("SELECT 1", good) }

            #expect(try db.execute("SELECT count(*) FROM t").first?.int64(at: 0) == 0)
            // Inside a transaction the COPY is part of it, and the connection still works.
            try db.transaction { db in _ = try db.copyIn("COPY t (n, s) FROM STDIN (FORMAT binary)", good) }
            #expect(try db.execute("SELECT n, s FROM t").map { [$0.string(at: 0), $0.string(at: 1)] } == [["1", "kept"]])
        }
    }
}
