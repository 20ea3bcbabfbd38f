import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Promo codes, against a real database file migrated with the real `Migrations/`.
@Suite struct SQLiteCodeRepositoryTests {
    @Test func codesAreNormalisedIgnoringCaseDashesAndSpaces() throws {
        #expect(try PromoCode.normalise("arctic-conf") == "ARCTICCONF")
        #expect(try PromoCode.normalise(" ArcticConf ") == "ARCTICCONF")
        #expect(try PromoCode.normalise("arctic – conf\u{00A0}") == "ARCTICCONF")  // en dash, no-break space
        #expect(try PromoCode.normalise("ab-12") == "AB12")
        #expect(try PromoCode.normalise(String(repeating: "a", count: 32)) == String(repeating: "A", count: 32))
        for malformed in ["abc", "a-b-c", "", String(repeating: "a", count: 33), "ARCTIC_CONF", "ÄRCTIC", "straße", "CODE!", "ＡＢＣＤ"] {
            let error = #expect(throws: StoreError.self, "\(malformed)") { try PromoCode.normalise(malformed) }
            #expect(error?.code == .invalid)
            #expect(error?.field == "code")
        }

        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "codes.sqlite")
            let codes = SQLiteCodeRepository(database: db)
            let created = try codes.create(code: "arctic-conf", kind: .unlock, now: utc("2026-01-01T00:00:00Z"))
            #expect(created.code == "ARCTICCONF")
            #expect(try db.column("SELECT code FROM promo_codes") == [.text("ARCTICCONF")])
            #expect(try codes.code(" Arctic-Conf ").code == "ARCTICCONF")
            let player = try insertPlayer(db, "p1")
            #expect(try codes.redeem(code: "arcticconf", playerID: player, now: utc("2026-01-02T00:00:00Z")).code == "ARCTICCONF")
        }
    }

    @Test func aRepeatByTheSamePlayerReturnsTheSameRedemptionAndCountsOnce() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "codes.sqlite")
            let codes = SQLiteCodeRepository(database: db)
            try createArcticConf(codes, maxRedemptions: 2)
            let player = try insertPlayer(db, "p1")

            let first = try codes.redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-01-10T10:00:00Z"))
            #expect(first == Redemption(
                code: "ARCTICCONF", kind: .discount(Money(minorUnits: 99, currency: "GBP")), playerID: player,
                redeemedAt: utc("2026-01-10T10:00:00Z"), expiresAt: utc("2026-02-28T23:59:59Z")
            ))
            let afterFirst = try db.dump()
            let second = try codes.redeem(code: "arctic-conf", playerID: player, now: utc("2026-01-11T10:00:00Z"))
            #expect(second == first)
            #expect(try db.dump() == afterFirst)
            #expect(try codes.code("ARCTICCONF").redemptions == 1)
            #expect(try db.scalar("SELECT count(*) FROM code_redemptions") == .integer(1))

            // Still the same result after the code expired or was withdrawn: the player did redeem it.
            try codes.disable(code: "ARCTICCONF", now: utc("2026-01-12T00:00:00Z"))
            #expect(try codes.redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-03-05T00:00:00Z")) == first)
            #expect(try codes.redemptions(playerID: player) == [first])
        }
    }

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
