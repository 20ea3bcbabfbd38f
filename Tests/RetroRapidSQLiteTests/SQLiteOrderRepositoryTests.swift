import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Prices and orders for unlimited play, against a real database file migrated with the real
/// `Migrations/`.
@Suite struct SQLiteOrderRepositoryTests {
    static let gbp299 = Money(minorUnits: 299, currency: "GBP")
    static let gbp99 = Money(minorUnits: 99, currency: "GBP")

    @Test func moneyIsParsedAndShownWithoutFloatingPoint() {
        #expect(Money(decimal: "0.99", currency: "GBP") == Self.gbp99)
        #expect(Money(decimal: "2.99", currency: "gbp") == Self.gbp299)
        #expect(Money(decimal: "2", currency: "GBP")?.minorUnits == 200)
        #expect(Money(decimal: "1.5", currency: "EUR")?.minorUnits == 150)
        #expect(Money(decimal: "500", currency: "JPY")?.minorUnits == 500)
        #expect(Money(decimal: "1.234", currency: "KWD")?.minorUnits == 1234)
        for bad in ["", ".99", "0.", "0.999", "-1", "1,50", "1e2", "abc", "99999999999999999999"] {
            #expect(Money(decimal: bad, currency: "GBP") == nil, "\(bad)")
        }
        #expect(Money(decimal: "1.5", currency: "JPY") == nil)
        #expect(Self.gbp99.description == "£0.99")
        #expect(Self.gbp299.description == "£2.99")
        #expect(Money(minorUnits: 1205, currency: "EUR").description == "€12.05")
        #expect(Money(minorUnits: 500, currency: "JPY").description == "500 JPY")
        #expect(Money(minorUnits: 7, currency: "CHF").description == "0.07 CHF")
    }

    @Test func theLowestLiveDiscountInTheBaseCurrencyApplies() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "orders.sqlite")
            let orders = SQLiteOrderRepository(database: db)
            let codes = SQLiteCodeRepository(database: db)
            let player = try insertPlayer(db, "p1")
            let created = utc("2026-01-01T00:00:00Z")
            try createArcticConf(codes)
            try codes.create(code: "HALFPRICE", kind: .discount(Money(minorUnits: 149, currency: "GBP")), now: created)
            try codes.create(code: "EUROCHEAP", kind: .discount(Money(minorUnits: 10, currency: "EUR")), now: created)
            try codes.create(code: "DEARER", kind: .discount(Money(minorUnits: 499, currency: "GBP")), now: created)
            let now = utc("2026-01-10T00:00:00Z")
            for code in ["DEARER", "HALFPRICE", "EUROCHEAP"] { try codes.redeem(code: code, playerID: player, now: now) }
            #expect(try orders.priceDue(playerID: player, now: now).amount == Money(minorUnits: 149, currency: "GBP"))

            try codes.redeem(code: "ARCTICCONF", playerID: player, now: now)
            #expect(try orders.priceDue(playerID: player, now: now).discountCode == "ARCTICCONF")

            // A withdrawn discount no longer applies; the next best one does.
            try codes.disable(code: "ARCTICCONF", now: now)
            #expect(try orders.priceDue(playerID: player, now: now).discountCode == "HALFPRICE")
            // After March only the codes with no expiry are left.
            #expect(try orders.priceDue(playerID: player, now: utc("2026-03-01T00:00:00Z")).amount == Money(minorUnits: 149, currency: "GBP"))

            // A base price in euros uses the euro discount.
            let euroOrders = SQLiteOrderRepository(database: db, basePrice: Money(minorUnits: 349, currency: "EUR"))
            #expect(try euroOrders.priceDue(playerID: player, now: now) == PriceDue(
                amount: Money(minorUnits: 10, currency: "EUR"), base: Money(minorUnits: 349, currency: "EUR"),
                discountCode: "EUROCHEAP", discountExpiresAt: nil
            ))
        }
    }

    @Test func anOrderIsCreatedAtThePriceDueAndPaidOnce() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "orders.sqlite")
            let orders = SQLiteOrderRepository(database: db)
            let entitlements = SQLiteEntitlementRepository(database: db)
            let player = try insertPlayer(db, "p1")
            try createArcticConf(SQLiteCodeRepository(database: db))
            try SQLiteCodeRepository(database: db).redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-02-20T00:00:00Z"))

            let order = try orders.createOrder(playerID: player, now: utc("2026-02-28T23:00:00Z"))
            #expect(order.publicID.hasPrefix("ord_") && order.publicID.count == 28)
            #expect(order.amount == Self.gbp99 && order.discountCode == "ARCTICCONF")
            #expect(order.status == .pending && order.paidAt == nil && order.providerEventID == nil)
            #expect(order.playerID == player)
            #expect(order.createdAt == utc("2026-02-28T23:00:00Z"))
            #expect(try orders.order(publicID: order.publicID, playerID: player) == order)

            // A second request before paying (a reload) gets the same order back.
            #expect(try orders.createOrder(playerID: player, now: utc("2026-02-28T23:05:00Z")) == order)
            #expect(try db.scalar("SELECT count(*) FROM orders") == .integer(1))

            // Paid after the discount expired: the order keeps the price it was made at.
            let paidAt = utc("2026-03-01T00:10:00Z")
            let paid = try orders.markPaid(orderID: order.publicID, providerEventID: "evt_1", now: paidAt)
            #expect(paid.status == .paid && paid.paidAt == paidAt && paid.providerEventID == "evt_1")
            #expect(paid.amount == Self.gbp99)
            #expect(try entitlements.unlimited(playerID: player) == UnlimitedEntitlement(
                playerID: player, source: .order, reference: order.publicID, grantedAt: paidAt
            ))
            #expect(try SQLiteQuotaRepository(database: db).status(playerID: player, now: paidAt).unlimited)

            // Paying again, even with another event, changes nothing.
            let afterPaying = try db.dump()
            let again = try orders.markPaid(orderID: order.publicID, providerEventID: "evt_2", now: utc("2026-03-02T00:00:00Z"))
            #expect(again == paid)
            #expect(try db.dump() == afterPaying)

            // Nothing left to buy.
            let conflict = #expect(throws: StoreError.self) { try orders.createOrder(playerID: player, now: utc("2026-03-02T00:00:00Z")) }
            #expect(conflict?.code == .conflict)
            #expect(try db.dump() == afterPaying)
            #expect(try orders.orders(playerID: player) == [paid])
        }
    }

}
