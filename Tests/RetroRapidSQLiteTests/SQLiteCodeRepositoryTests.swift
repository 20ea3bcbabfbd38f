import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Promo codes where only SQL can check; the rules are in
/// Tests/RetroRapidStorageTests/CodeRepositoryContractTests.swift.
@Suite struct SQLiteCodeRepositoryTests {
    // Stays here: the stored text of the code column (the contract sees it only through `list()`).
    @Test func aCodeIsStoredInItsNormalisedSpelling() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "codes.sqlite")
            let codes = SQLCodeRepository(executor: SQLiteExecutor(database: db))
            try codes.create(code: "arctic-conf", kind: .unlock, now: utc("2026-01-01T00:00:00Z"))
            #expect(try db.column("SELECT code FROM promo_codes") == [.text("ARCTICCONF")])
        }
    }
}
