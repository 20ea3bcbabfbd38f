import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidSQLite
import Testing

/// The one SQL layer's executor (`SQLExecutor`), run against every backend in
/// `StorageBackends.all`: the same statement text, with `$n` placeholders, means the same
/// thing on both, and what the database hands back is checked as it is read.
@Suite struct SQLExecutorContractTests {
    private func executor(_ store: StoreUnderTest) -> any SQLExecutor {
        if let sqlite = store.connection as? SQLiteStorage { return sqlite.executor }
        if let postgres = store.connection as? PostgresStorage { return postgres.connection }
        preconditionFailure("no executor for \(type(of: store.connection))")
    }

    private let insertPlayer = """
        INSERT INTO players (public_id, display_name, created_at) VALUES ($2, $1, $3)
        RETURNING id, public_id, display_name
        """

    @Test(arguments: StorageBackends.all) func placeholdersBindByNumberNotByOrderOfAppearance(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            let inserted = try #require(try db.query(insertPlayer, ["Ada", "p-ada", "2026-01-01T00:00:00Z"]).first)
            #expect(try inserted.string("public_id") == "p-ada")
            #expect(try inserted.string("display_name") == "Ada")
            #expect(try inserted.int64("id") > 0)
            // The same text again comes from the statement cache and binds the same way.
            let again = try #require(try db.query(insertPlayer, ["Bea", "p-bea", "2026-01-01T00:00:00Z"]).first)
            #expect(try again.string("public_id") == "p-bea")
        }
    }

    @Test(arguments: StorageBackends.all) func aPlaceholderInsideAQuotedLiteralIsText(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            _ = try store.addPlayer("p-1")
            let row = try #require(try db.query("SELECT '$1 costs $2' AS literal FROM players WHERE public_id = $1", ["p-1"]).first)
            #expect(try row.string("literal") == "$1 costs $2")
        }
    }

    @Test(arguments: StorageBackends.all) func aListOfTextsBoundAsOneValueMatchesExactlyThoseTexts(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            let awkward = [#"say "hi""#, #"back\slash"#, "a,b", "{braces}", "new\nline", "[\"json\"]", "plain"]
            for id in awkward + ["left-out"] { _ = try store.addPlayer(id) }
            let sql = "SELECT public_id FROM players WHERE \(db.dialect.isOneOf("public_id", textListAt: "$1"))"
            let found = try db.query(sql, [db.dialect.textList(awkward)]).rows.map { try $0.string("public_id") }
            #expect(Set(found) == Set(awkward))
            #expect(try db.query(sql, [db.dialect.textList([])]).isEmpty)
        }
    }

    @Test(arguments: StorageBackends.all) func affectedRowsCountWritesAndAQueryCountsNone(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            for id in ["p-1", "p-2", "p-3"] { _ = try store.addPlayer(id) }
            #expect(try db.query("UPDATE players SET display_name = $1 WHERE public_id <> $2", ["Cy", "p-1"]).affectedRows == 2)
            let read = try db.query("SELECT display_name FROM players ORDER BY public_id", [])
            #expect(read.affectedRows == 0)
            #expect(try read.rows.map { try $0.string("display_name") } == ["Racer", "Cy", "Cy"])
            #expect(try db.query("DELETE FROM players WHERE public_id = $1", ["nobody"]).affectedRows == 0)
        }
    }

    @Test(arguments: StorageBackends.all) func aValueOfTheWrongTypeOrAMissingColumnIsUnreadableNotATrap(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            _ = try store.addPlayer("p-1")
            let row = try #require(try db.query("SELECT display_name, CAST(NULL AS TEXT) AS absent FROM players", []).first)
            let notANumber = #expect(throws: StoreError.self) { try row.int64("display_name") }
            #expect(notANumber?.code == .unreadable)
            #expect(notANumber?.message.contains("display_name") == true)
            let null = #expect(throws: StoreError.self) { try row.string("absent") }
            #expect(null?.code == .unreadable)
            #expect(try row.optionalString("absent") == nil)
            let missing = #expect(throws: StoreError.self) { try row.string("public_id") }
            #expect(missing?.code == .unreadable)
        }
    }

    @Test(arguments: StorageBackends.all) func aBrokenConstraintIsNamedWhicheverBackendThrewIt(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            _ = try store.addPlayer("p-1")
            let duplicate = #expect(throws: (any Error).self) {
                try db.query("INSERT INTO players (public_id, display_name, created_at) VALUES ($1, $2, $3)",
                             ["p-1", "Again", "2026-01-01T00:00:00Z"])
            }
            #expect(duplicate.flatMap(db.constraint(violatedBy:)) == .unique)
            let orphan = #expect(throws: (any Error).self) {
                try db.query("INSERT INTO devices (player_id, token_hash, label, created_at) VALUES ($1, $2, $3, $4)",
                             [Int64(999_999), [UInt8](repeating: 7, count: 32), "phone", "2026-01-01T00:00:00Z"])
            }
            #expect(orphan.flatMap(db.constraint(violatedBy:)) == .foreignKey)
            let syntax = #expect(throws: (any Error).self) { try db.query("SELEC nothing", []) }
            #expect(syntax != nil && syntax.flatMap(db.constraint(violatedBy:)) == nil)
            #expect(db.constraint(violatedBy: StoreError.unreadable("not the database's")) == nil)
        }
    }

    @Test(arguments: StorageBackends.all) func aWriteTransactionThatThrowsLeavesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let db = executor(store)
            let before = try store.dump()
            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try db.writeTransaction {
                    try db.query(insertPlayer, ["Ada", "p-ada", "2026-01-01T00:00:00Z"])
                    throw Refused()
                }
            }
            #expect(try store.dump() == before)
            let kept = try db.writeTransaction { try db.query(insertPlayer, ["Ada", "p-ada", "2026-01-01T00:00:00Z"]).rows.count }
            #expect(kept == 1)
            #expect(try store.dump() != before)
        }
    }
}

/// The dialects' differences, as text: no database needed.
@Suite struct SQLDialectTests {
    @Test func sqliteNumbersPlaceholdersAsPostgreSQLDoes() {
        #expect(SQLDialect.sqlite.placeholders("SELECT a FROM t WHERE b = $2 AND c = $10 OR d = $1")
                == "SELECT a FROM t WHERE b = ?2 AND c = ?10 OR d = ?1")
        #expect(SQLDialect.postgresql.placeholders("SELECT $1") == "SELECT $1")
    }

    @Test func quotedTextNamesAndCommentsAreLeftAlone() {
        #expect(SQLDialect.sqlite.placeholders("SELECT '$1', 'it''s $2', \"col$3\" FROM t -- $4\nWHERE x = $5")
                == "SELECT '$1', 'it''s $2', \"col$3\" FROM t -- $4\nWHERE x = ?5")
        // A `$` that is not a placeholder, and an unclosed quote, change nothing.
        #expect(SQLDialect.sqlite.placeholders("SELECT $a, '$1") == "SELECT $a, '$1")
    }

    @Test func lockingAndGreatestAreEachDialectsOwn() {
        #expect(SQLDialect.sqlite.lockingRead == "")
        #expect(SQLDialect.postgresql.lockingRead == " FOR UPDATE")
        #expect(SQLDialect.sqlite.greatest("a", "b") == "max(a, b)")
        #expect(SQLDialect.postgresql.greatest("a", "b") == "GREATEST(a, b)")
    }
}
