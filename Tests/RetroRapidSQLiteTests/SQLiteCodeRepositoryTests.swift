import Foundation
import RetroRapidDomain
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
            let codes = SQLiteCodeRepository(database: db)
            try codes.create(code: "arctic-conf", kind: .unlock, now: utc("2026-01-01T00:00:00Z"))
            #expect(try db.column("SELECT code FROM promo_codes") == [.text("ARCTICCONF")])
        }
    }

    // Stays here: concurrency across ten SQLite connections on one file.
    /// 100 players redeem a code capped at 10 at the same moment, from 10 threads with a
    /// connection each: exactly 10 redemptions, every other one refused as fully redeemed.
    @Test func aCapOfTenHoldsExactlyWhenAHundredPlayersRedeemAtOnce() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "codes.sqlite")
            let codes = SQLiteCodeRepository(database: db)
            try codes.create(code: "TEN-ONLY", kind: .unlock, maxRedemptions: 10, now: utc("2026-01-01T00:00:00Z"))
            let players = try (0..<100).map { try insertPlayer(db, "player\($0)") }
            let now = utc("2026-01-05T12:00:00Z")

            let threads = 10
            let outcomes = onThreadsAtOnce(threads, path: db.path) { thread, connection, record in
                let mine = players.enumerated().filter { $0.offset % threads == thread }.map(\.element)
                let codes = SQLiteCodeRepository(database: connection)
                for player in mine {
                    do {
                        _ = try codes.redeem(code: "ten-only", playerID: player, now: now)
                        record("redeemed")
                    } catch let error as StoreError where error.code == .expired && error.message.contains("has been fully redeemed") {
                        record("fully redeemed")
                    } catch {
                        record("failed: \(error)")
                    }
                }
            }

            let counts = Dictionary(outcomes.map { ($0, 1) }, uniquingKeysWith: +)
            #expect(counts == ["redeemed": 10, "fully redeemed": 90])
            #expect(try codes.code("TEN-ONLY").redemptions == 10)
            #expect(try db.scalar("SELECT count(*) FROM code_redemptions") == .integer(10))
            #expect(try db.scalar("SELECT count(*) FROM unlimited_entitlements") == .integer(10))
        }
    }
}
