import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import RetroRapidSQL
import Testing

@Suite struct DatabaseErrorTests {
    @Test func errorCarriesCodeAndSQLButNotTheBoundValue() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: "CREATE TABLE accounts (name TEXT NOT NULL UNIQUE, secret TEXT NOT NULL) STRICT")
            let insert = try db.prepare("INSERT INTO accounts (name, secret) VALUES (?, ?)")
            try insert.execute(["alice", "first"])
            let secret = "s3cr3t-token-7f2a9c"

            let error = #expect(throws: DatabaseError.self) { try insert.execute(["alice", secret]) }
            let caught = try #require(error)
            #expect(caught.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
            #expect(caught.primaryCode == 19)     // SQLITE_CONSTRAINT
            #expect(caught.sql == "INSERT INTO accounts (name, secret) VALUES (?, ?)")
            #expect(caught.message.contains("accounts.name"))
            #expect(caught.description.contains("2067"))
            #expect(caught.description.contains("INSERT INTO accounts"))
            for text in [caught.description, String(reflecting: caught), "\(caught)"] {
                #expect(!text.contains(secret))
                #expect(!text.contains("alice"))
            }
        }
    }

    @Test func constraintKindsAreRecognised() throws {
        try withTemporaryDirectory { folder in
            let db = try openDatabase(in: folder)
            try db.execute(sql: """
                CREATE TABLE parents (id INTEGER PRIMARY KEY) STRICT;
                CREATE TABLE children (
                    id INTEGER PRIMARY KEY,
                    parent_id INTEGER NOT NULL REFERENCES parents(id),
                    code TEXT NOT NULL UNIQUE,
                    age INTEGER NOT NULL CHECK (age >= 0)
                ) STRICT;
                INSERT INTO parents (id) VALUES (1);
                INSERT INTO children VALUES (1, 1, 'a', 3);
                """)
            let insert = try db.prepare("INSERT INTO children (parent_id, code, age) VALUES (?, ?, ?)")
            func failure(_ values: [any SQLBindable]) -> DatabaseError? {
                #expect(throws: DatabaseError.self) { try insert.execute(values) }
            }

            let unique = failure([1, "a", 1])
            #expect(unique?.isUniqueViolation == true)
            #expect(unique?.isForeignKeyViolation == false)

            let foreignKey = failure([99, "b", 1])
            #expect(foreignKey?.isForeignKeyViolation == true)
            #expect(foreignKey?.isUniqueViolation == false)

            let check = failure([1, "c", -1])
            #expect(check?.isCheckViolation == true)
            #expect(check?.isConstraintViolation == true)

            let notNull = failure([1, DatabaseValue.null, 1])
            #expect(notNull?.isNotNullViolation == true)
            #expect(notNull?.isCheckViolation == false)

            let primaryKey = #expect(throws: DatabaseError.self) {
                try db.prepare("INSERT INTO parents (id) VALUES (1)").execute()
            }
            #expect(primaryKey?.isUniqueViolation == true)
            #expect(primaryKey?.isBusy == false)
        }
    }
}
