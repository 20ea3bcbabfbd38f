import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `OrderRepository`, run against every backend in `StorageBackends.all`.
@Suite struct OrderRepositoryContractTests {
    static let gbp299 = Money(minorUnits: 299, currency: "GBP")
    static let gbp99 = Money(minorUnits: 99, currency: "GBP")

    @Test(arguments: StorageBackends.all) func aCheckoutPlanReusesTheOpenCheckoutAndOnlyThat(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let orders = store.repositories().orders
            let player = try store.addPlayer("p1")
            let now = utc("2026-01-10T00:00:00Z")
            guard case .new(let id, let price) = try orders.checkoutPlan(playerID: player, now: now) else {
                Issue.record("expected a new order")
                return
            }
            #expect(price.amount == Self.gbp299 && id.hasPrefix("ord_"))
            #expect(try orders.orders(playerID: player).isEmpty)  // planning stores nothing
            let checkout = Order.Checkout(sessionID: "cs_test_1", url: "https://pay.example/cs_test_1",
                                          expiresAt: now.addingTimeInterval(3600))
            guard case .created(let order) = try orders.createOrder(publicID: id, playerID: player, amount: price.amount,
                                                                    discountCode: nil, checkout: checkout, now: now) else {
                Issue.record("expected the order to be stored")
                return
            }
            #expect(order.status == .pending && order.checkout == checkout)
            #expect(try orders.checkoutPlan(playerID: player, now: now.addingTimeInterval(60)) == .existing(order))
            // Once the provider's page has closed, a new order is planned.
            guard case .new(let later, _) = try orders.checkoutPlan(playerID: player, now: now.addingTimeInterval(3600)) else {
                Issue.record("expected a new order after the checkout expired")
                return
            }
            #expect(later != id)

            let cancelled = try orders.cancel(publicID: id, playerID: player, now: now.addingTimeInterval(5))
            #expect(cancelled.status == .cancelled && cancelled.cancelledAt == now.addingTimeInterval(5))
            #expect(!cancelled.checkoutIsOpen(at: now))
            #expect(try orders.cancel(publicID: id, playerID: player, now: now.addingTimeInterval(9)) == cancelled)
            guard case .new = try orders.checkoutPlan(playerID: player, now: now.addingTimeInterval(60)) else {
                Issue.record("a cancelled order must not be offered again")
                return
            }
            let other = try store.addPlayer("p2")
            #expect(throws: StoreError.self) { try orders.cancel(publicID: id, playerID: other, now: now) }
            try orders.markPaid(orderID: id, providerEventID: "evt_late", now: now.addingTimeInterval(10))
            #expect(throws: StoreError.self) { try orders.cancel(publicID: id, playerID: player, now: now) }
        }
    }

    /// Two purchases planned at the same instant (two tabs, two server processes) both open a
    /// session at the provider; only the first is stored, the second gets that order back.
    @Test(arguments: StorageBackends.all) func twoPurchasesPlannedAtOnceStoreOneOrder(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let orders = store.repositories().orders
            let player = try store.addPlayer("p1")
            let now = utc("2026-01-10T00:00:00Z")
            guard case .new(let first, let price) = try orders.checkoutPlan(playerID: player, now: now),
                  case .new(let second, _) = try orders.checkoutPlan(playerID: player, now: now) else {
                Issue.record("expected both plans to be new orders")
                return
            }
            func session(_ id: String, openedAt: Date = now) -> Order.Checkout {
                Order.Checkout(sessionID: id, url: "https://pay.example/\(id)", expiresAt: openedAt.addingTimeInterval(3600))
            }
            guard case .created(let stored) = try orders.createOrder(publicID: first, playerID: player, amount: price.amount,
                                                                     discountCode: nil, checkout: session("cs_1"), now: now) else {
                Issue.record("expected the first to be stored")
                return
            }
            let again = try orders.createOrder(publicID: second, playerID: player, amount: price.amount, discountCode: nil,
                                               checkout: session("cs_2"), now: now)
            #expect(again == .existing(stored))
            #expect(try orders.orders(playerID: player).map(\.publicID) == [first])
            // A closed page does not hold a new one back.
            let later = now.addingTimeInterval(7200)
            guard case .created(let fresh) = try orders.createOrder(publicID: second, playerID: player, amount: price.amount,
                                                                    discountCode: nil, checkout: session("cs_3", openedAt: later), now: later) else {
                Issue.record("expected a new order once the first page had closed")
                return
            }
            #expect(fresh.publicID == second)
        }
    }

    @Test(arguments: StorageBackends.all) func aRedeemedDiscountLowersThePriceDueUntilItExpires(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let orders = store.repositories().orders
            let player = try store.addPlayer("p1")
            try createArcticConf(store.repositories().codes)

            let base = try orders.priceDue(playerID: player, now: utc("2026-01-10T00:00:00Z"))
            #expect(base == PriceDue(amount: Self.gbp299, base: Self.gbp299, discountCode: nil, discountExpiresAt: nil))

            try store.repositories().codes.redeem(code: "arctic-conf", playerID: player, now: utc("2026-01-10T00:00:00Z"))
            let discounted = try orders.priceDue(playerID: player, now: utc("2026-01-10T00:00:01Z"))
            #expect(discounted == PriceDue(amount: Self.gbp99, base: Self.gbp299, discountCode: "ARCTICCONF", discountExpiresAt: utc("2026-02-28T23:59:59Z")))
            #expect(try orders.priceDue(playerID: player, now: utc("2026-02-28T23:59:59Z")).amount == Self.gbp99)
            #expect(try orders.priceDue(playerID: player, now: utc("2026-03-01T00:00:00Z")) == base)

            // Another player's redemption does not lower this one's price.
            let other = try store.addPlayer("p2")
            #expect(try orders.priceDue(playerID: other, now: utc("2026-01-10T00:00:01Z")) == base)
            #expect((#expect(throws: StoreError.self) { try orders.priceDue(playerID: 9999, now: utc("2026-01-10T00:00:01Z")) })?.code == .notFound)
        }
    }

    @Test(arguments: StorageBackends.all) func aPriceChangeMakesANewOrderAndOrdersAreEachPlayersOwn(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let orders = store.repositories().orders
            let player = try store.addPlayer("p1")
            let other = try store.addPlayer("p2")
            try createArcticConf(store.repositories().codes)

            let full = try orders.createOrder(playerID: player, now: utc("2026-01-10T00:00:00Z"))
            #expect(full.amount == Self.gbp299 && full.discountCode == nil)
            try store.repositories().codes.redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-01-10T00:01:00Z"))
            let discounted = try orders.createOrder(playerID: player, now: utc("2026-01-10T00:02:00Z"))
            #expect(discounted.publicID != full.publicID && discounted.amount == Self.gbp99)
            #expect(try orders.orders(playerID: player).map(\.publicID) == [discounted.publicID, full.publicID])

            let before = try store.dump()
            #expect((#expect(throws: StoreError.self) { try orders.order(publicID: full.publicID, playerID: other) })?.code == .notFound)
            #expect((#expect(throws: StoreError.self) { try orders.order(publicID: "ord_nosuchorder", playerID: player) })?.code == .notFound)
            #expect((#expect(throws: StoreError.self) { try orders.createOrder(playerID: 9999, now: utc("2026-01-10T00:03:00Z")) })?.code == .notFound)
            #expect((#expect(throws: StoreError.self) { try orders.markPaid(orderID: "ord_nosuchorder", providerEventID: "evt_9", now: utc("2026-01-10T00:03:00Z")) })?.code == .notFound)
            #expect((#expect(throws: StoreError.self) { try orders.markPaid(orderID: full.publicID, providerEventID: "", now: utc("2026-01-10T00:03:00Z")) })?.code == .invalid)
            #expect(try store.dump() == before)
            #expect(try orders.order(publicID: full.publicID) == full)
        }
    }

    @Test(arguments: StorageBackends.all) func theLowestLiveDiscountInTheBaseCurrencyApplies(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let orders = repositories.orders
            let codes = repositories.codes
            let player = try store.addPlayer("p1")
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
            let euroOrders = store.repositories(RepositorySettings(basePrice: Money(minorUnits: 349, currency: "EUR"))).orders
            #expect(try euroOrders.priceDue(playerID: player, now: now) == PriceDue(
                amount: Money(minorUnits: 10, currency: "EUR"), base: Money(minorUnits: 349, currency: "EUR"),
                discountCode: "EUROCHEAP", discountExpiresAt: nil
            ))
        }
    }

    @Test(arguments: StorageBackends.all) func anOrderIsCreatedAtThePriceDueAndPaidOnce(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let orders = repositories.orders
            let entitlements = repositories.entitlements
            let player = try store.addPlayer("p1")
            try createArcticConf(repositories.codes)
            try repositories.codes.redeem(code: "ARCTICCONF", playerID: player, now: utc("2026-02-20T00:00:00Z"))
            let gbp99 = Money(minorUnits: 99, currency: "GBP")

            let order = try orders.createOrder(playerID: player, now: utc("2026-02-28T23:00:00Z"))
            #expect(order.publicID.hasPrefix("ord_") && order.publicID.count == 28)
            #expect(order.amount == gbp99 && order.discountCode == "ARCTICCONF")
            #expect(order.status == .pending && order.paidAt == nil && order.providerEventID == nil)
            #expect(order.playerID == player)
            #expect(order.createdAt == utc("2026-02-28T23:00:00Z"))
            #expect(try orders.order(publicID: order.publicID, playerID: player) == order)

            // A second request before paying (a reload) gets the same order back, and only it is stored.
            let afterCreating = try store.dump()
            #expect(try orders.createOrder(playerID: player, now: utc("2026-02-28T23:05:00Z")) == order)
            #expect(try orders.orders(playerID: player) == [order])
            #expect(try store.dump() == afterCreating)

            // Paid after the discount expired: the order keeps the price it was made at.
            let paidAt = utc("2026-03-01T00:10:00Z")
            let paid = try orders.markPaid(orderID: order.publicID, providerEventID: "evt_1", now: paidAt)
            #expect(paid.status == .paid && paid.paidAt == paidAt && paid.providerEventID == "evt_1")
            #expect(paid.amount == gbp99)
            #expect(try entitlements.unlimited(playerID: player) == UnlimitedEntitlement(
                playerID: player, source: .order, reference: order.publicID, grantedAt: paidAt
            ))
            #expect(try repositories.quota.status(playerID: player, now: paidAt).unlimited)

            // Paying again, even with another event, changes nothing.
            let afterPaying = try store.dump()
            let again = try orders.markPaid(orderID: order.publicID, providerEventID: "evt_2", now: utc("2026-03-02T00:00:00Z"))
            #expect(again == paid)
            #expect(try store.dump() == afterPaying)

            // Nothing left to buy.
            let conflict = #expect(throws: StoreError.self) { try orders.createOrder(playerID: player, now: utc("2026-03-02T00:00:00Z")) }
            #expect(conflict?.code == .conflict)
            #expect(try store.dump() == afterPaying)
            #expect(try orders.orders(playerID: player) == [paid])
        }
    }
}
