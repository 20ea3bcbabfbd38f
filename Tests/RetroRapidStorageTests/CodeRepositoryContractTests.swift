import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `CodeRepository`, run against every backend in `StorageBackends.all`.
@Suite struct CodeRepositoryContractTests {
    @Test(arguments: StorageBackends.all) func creatingADuplicateInAnySpellingIsAConflict(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            let created = try createArcticConf(codes, maxRedemptions: 500)
            #expect(created.kind == .discount(Money(minorUnits: 99, currency: "GBP")))
            #expect(created.expiresAt == utc("2026-02-28T23:59:59Z"))
            #expect(created.maxRedemptions == 500 && created.redemptions == 0 && !created.disabled)

            let before = try store.dump()
            for spelling in ["ARCTICCONF", "arctic-conf", " Arctic Conf "] {
                let error = #expect(throws: StoreError.self) {
                    try codes.create(code: spelling, kind: .unlock, now: utc("2026-01-02T00:00:00Z"))
                }
                #expect(error?.code == .conflict)
            }
            try codes.disable(code: "ARCTICCONF", now: utc("2026-01-03T00:00:00Z"))
            let afterDisable = try store.dump()
            #expect((#expect(throws: StoreError.self) {
                try codes.create(code: "ARCTICCONF", kind: .unlock, now: utc("2026-01-04T00:00:00Z"))
            })?.code == .conflict)
            #expect(try store.dump() == afterDisable)
            #expect(afterDisable != before)
        }
    }

    @Test(arguments: StorageBackends.all) func creatingAMalformedCodeIsRefusedAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            let now = utc("2026-01-01T00:00:00Z")
            let before = try store.dump()
            let attempts: [(String, () throws -> Void)] = [
                ("code", { _ = try codes.create(code: "no", kind: .unlock, now: now) }),
                ("price", { _ = try codes.create(code: "FREE", kind: .discount(Money(minorUnits: 0, currency: "GBP")), now: now) }),
                ("price", { _ = try codes.create(code: "NEGATIVE", kind: .discount(Money(minorUnits: -5, currency: "GBP")), now: now) }),
                ("price.currency", { _ = try codes.create(code: "POUNDS", kind: .discount(Money(minorUnits: 99, currency: "£")), now: now) }),
                ("expiresAt", { _ = try codes.create(code: "BACKWARDS", kind: .unlock, startsAt: utc("2026-03-01T00:00:00Z"), expiresAt: utc("2026-02-01T00:00:00Z"), now: now) }),
                ("expiresAt", { _ = try codes.create(code: "LATE", kind: .unlock, expiresAt: utc("2025-12-31T23:59:59Z"), now: now) }),
                ("maxRedemptions", { _ = try codes.create(code: "NOBODY", kind: .unlock, maxRedemptions: 0, now: now) }),
            ]
            for (field, attempt) in attempts {
                let error = #expect(throws: StoreError.self, "\(field)") { try attempt() }
                #expect(error?.code == .invalid)
                #expect(error?.field == field)
            }
            #expect(try store.dump() == before)
            // A lowercase currency is accepted and stored uppercase.
            let euros = try codes.create(code: "EUROS", kind: .discount(Money(minorUnits: 99, currency: "eur")), now: now)
            #expect(euros.kind == .discount(Money(minorUnits: 99, currency: "EUR")))
        }
    }

    @Test(arguments: StorageBackends.all) func listAndDisable(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            try createArcticConf(codes)
            try codes.create(code: "PRESS-2026", kind: .unlock, startsAt: utc("2026-01-10T00:00:00Z"), maxRedemptions: 50, now: utc("2026-01-02T00:00:00Z"))
            #expect(try codes.list().map(\.code) == ["ARCTICCONF", "PRESS2026"])

            let disabled = try codes.disable(code: "press-2026", now: utc("2026-01-05T12:00:00Z"))
            #expect(disabled.disabledAt == utc("2026-01-05T12:00:00Z"))
            let again = try codes.disable(code: "PRESS2026", now: utc("2026-01-06T00:00:00Z"))
            #expect(again == disabled)
            #expect(try codes.list().map(\.disabled) == [false, true])

            let before = try store.dump()
            #expect((#expect(throws: StoreError.self) { try codes.disable(code: "NOSUCHCODE", now: utc("2026-01-06T00:00:00Z")) })?.code == .notFound)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func everyRefusedRedemptionSaysWhyAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            let created = utc("2026-01-01T00:00:00Z")
            try createArcticConf(codes)
            try codes.create(code: "SPRING", kind: .unlock, startsAt: utc("2026-03-01T00:00:00Z"), now: created)
            try codes.create(code: "WITHDRAWN", kind: .unlock, now: created)
            try codes.disable(code: "WITHDRAWN", now: utc("2026-01-20T08:00:00Z"))
            try codes.create(code: "ONLYONE", kind: .unlock, maxRedemptions: 1, now: created)
            let first = try store.addPlayer("first")
            let player = try store.addPlayer("p1")
            try codes.redeem(code: "ONLYONE", playerID: first, now: utc("2026-01-02T00:00:00Z"))
            let subscriber = try store.addPlayer("subscriber")
            try store.repositories().entitlements.grantUnlimited(playerID: subscriber, source: .operator, reference: "support", now: created)

            let cases: [(String, Int64, String, StoreError.Code, String)] = [
                ("NOSUCHCODE", player, "2026-01-15T00:00:00Z", .notFound, "There is no code NOSUCHCODE"),
                ("bad!", player, "2026-01-15T00:00:00Z", .invalid, "letters A–Z"),
                ("ARCTICCONF", 9999, "2026-01-15T00:00:00Z", .notFound, "No player"),
                ("ARCTICCONF", player, "2026-03-01T00:00:00Z", .expired, "Code ARCTICCONF expired at 2026-02-28T23:59:59Z."),
                ("spring", player, "2026-02-28T23:59:59Z", .expired, "Code SPRING cannot be redeemed yet: it starts at 2026-03-01T00:00:00Z."),
                ("WITHDRAWN", player, "2026-01-21T00:00:00Z", .expired, "Code WITHDRAWN was withdrawn on 2026-01-20T08:00:00Z"),
                ("ONLYONE", player, "2026-01-15T00:00:00Z", .expired, "Code ONLYONE has been fully redeemed."),
                ("ARCTICCONF", subscriber, "2026-01-15T00:00:00Z", .conflict, "already have unlimited play"),
            ]
            let before = try store.dump()
            for (code, playerID, now, expected, message) in cases {
                let error = #expect(throws: StoreError.self, "\(code)") { try codes.redeem(code: code, playerID: playerID, now: utc(now)) }
                #expect(error?.code == expected, "\(code)")
                #expect(error?.message.contains(message) == true, "\(code): \(error?.message ?? "")")
                #expect(try store.dump() == before, "\(code) changed the database")
            }
            // Live at both ends of its window, to the second.
            #expect(try codes.redeem(code: "spring", playerID: player, now: utc("2026-03-01T00:00:00Z")).code == "SPRING")
            let late = try store.addPlayer("late")
            #expect(try codes.redeem(code: "ARCTICCONF", playerID: late, now: utc("2026-02-28T23:59:59Z")).code == "ARCTICCONF")
        }
    }

    @Test(arguments: StorageBackends.all) func anUnlockCodeGrantsUnlimitedPlayInTheSameRedemption(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            let entitlements = store.repositories().entitlements
            try codes.create(code: "PRESS-2026", kind: .unlock, now: utc("2026-01-01T00:00:00Z"))
            let player = try store.addPlayer("p1")
            #expect(try entitlements.hasUnlimited(playerID: player) == false)

            let redemption = try codes.redeem(code: "press2026", playerID: player, now: utc("2026-01-05T09:30:00Z"))
            #expect(redemption.grantsUnlimited)
            #expect(try entitlements.hasUnlimited(playerID: player))
            #expect(try entitlements.unlimited(playerID: player) == UnlimitedEntitlement(
                playerID: player, source: .code, reference: "PRESS2026", grantedAt: utc("2026-01-05T09:30:00Z")
            ))
            #expect(try store.repositories().quota.status(playerID: player, now: utc("2026-01-05T10:00:00Z")).unlimited)
            #expect(try codes.redeem(code: "PRESS2026", playerID: player, now: utc("2026-01-06T00:00:00Z")) == redemption)
        }
    }

    @Test(arguments: StorageBackends.all) func grantingUnlimitedIsIdempotentAndKeepsTheFirstGrant(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let entitlements = store.repositories().entitlements
            let player = try store.addPlayer("p1")
            let first = try entitlements.grantUnlimited(playerID: player, source: .operator, reference: "tester", now: utc("2026-01-05T00:00:00Z"))
            let before = try store.dump()
            let second = try entitlements.grantUnlimited(playerID: player, source: .order, reference: "ord_x", now: utc("2026-01-06T00:00:00Z"))
            #expect(second == first)
            #expect(second.source == .operator && second.reference == "tester")
            #expect(try store.dump() == before)
            #expect((#expect(throws: StoreError.self) {
                try entitlements.grantUnlimited(playerID: player + 1, source: .operator, reference: "x", now: utc("2026-01-06T00:00:00Z"))
            })?.code == .notFound)
            #expect((#expect(throws: StoreError.self) {
                try entitlements.grantUnlimited(playerID: player, source: .operator, reference: "  ", now: utc("2026-01-06T00:00:00Z"))
            })?.code == .invalid)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func codesAreNormalisedIgnoringCaseDashesAndSpaces(_ backend: BackendUnderTest) throws {
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

        try withStore(backend) { store in
            let codes = store.repositories().codes
            let created = try codes.create(code: "arctic-conf", kind: .unlock, now: utc("2026-01-01T00:00:00Z"))
            #expect(created.code == "ARCTICCONF")
            #expect(try codes.list().map(\.code) == ["ARCTICCONF"])
            #expect(try codes.code(" Arctic-Conf ").code == "ARCTICCONF")
            let player = try store.addPlayer("p1")
            #expect(try codes.redeem(code: "arcticconf", playerID: player, now: utc("2026-01-02T00:00:00Z")).code == "ARCTICCONF")
        }
    }

    @Test(arguments: StorageBackends.all) func aRepeatByTheSamePlayerReturnsTheSameRedemptionAndCountsOnce(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            try createArcticConf(codes, maxRedemptions: 2)
            let player = try store.addPlayer("p1")

            let first = try codes.redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-01-10T10:00:00Z"))
            #expect(first == Redemption(
                code: "ARCTICCONF", kind: .discount(Money(minorUnits: 99, currency: "GBP")), playerID: player,
                redeemedAt: utc("2026-01-10T10:00:00Z"), expiresAt: utc("2026-02-28T23:59:59Z")
            ))
            let afterFirst = try store.dump()
            let second = try codes.redeem(code: "arctic-conf", playerID: player, now: utc("2026-01-11T10:00:00Z"))
            #expect(second == first)
            #expect(try store.dump() == afterFirst)
            #expect(try codes.code("ARCTICCONF").redemptions == 1)
            #expect(try codes.redemptions(playerID: player).count == 1)

            // Still the same result after the code expired or was withdrawn: the player did redeem it.
            try codes.disable(code: "ARCTICCONF", now: utc("2026-01-12T00:00:00Z"))
            #expect(try codes.redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-03-05T00:00:00Z")) == first)
            #expect(try codes.redemptions(playerID: player) == [first])
        }
    }

    /// 100 players redeem a code capped at 10 at the same moment, from 10 threads with a
    /// connection each: exactly 10 redemptions, every other one refused as fully redeemed.
    @Test(arguments: StorageBackends.all) func aCapOfTenHoldsExactlyWhenAHundredPlayersRedeemAtOnce(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().codes
            try codes.create(code: "TEN-ONLY", kind: .unlock, maxRedemptions: 10, now: utc("2026-01-01T00:00:00Z"))
            let players = try (0..<100).map { try store.addPlayer("player\($0)") }
            let now = utc("2026-01-05T12:00:00Z")

            let threads = 10
            let outcomes = raceConnections(store, threads) { thread, repositories -> [String] in
                players.enumerated().filter { $0.offset % threads == thread }.map { _, player in
                    do {
                        _ = try repositories.codes.redeem(code: "ten-only", playerID: player, now: now)
                        return "redeemed"
                    } catch let error as StoreError where error.code == .expired && error.message.contains("has been fully redeemed") {
                        return "fully redeemed"
                    } catch {
                        return "failed: \(error)"
                    }
                }
            }

            let said = try outcomes.flatMap { try $0.get() }
            #expect(Dictionary(said.map { ($0, 1) }, uniquingKeysWith: +) == ["redeemed": 10, "fully redeemed": 90])
            #expect(try codes.code("TEN-ONLY").redemptions == 10)
            let entitlements = store.repositories().entitlements
            #expect(try players.filter { try entitlements.hasUnlimited(playerID: $0) }.count == 10)
        }
    }
}
