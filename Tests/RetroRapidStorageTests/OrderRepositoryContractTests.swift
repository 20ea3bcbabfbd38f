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
}
