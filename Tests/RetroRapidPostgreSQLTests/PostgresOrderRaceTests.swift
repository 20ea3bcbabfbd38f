import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// Orders against a real server, with one player's purchases and payments on connections of
/// their own (tabs and retries served by many nodes): one open order per price, one payment.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresOrderRaceTests {
    let now = utc("2026-01-10T00:00:00Z")

    @Test func concurrentOrdersForOnePlayerMakeOneOrder() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let now = now
            let results = raceOnConnections(30, url: url) { _, racer in
                try SQLOrderRepository(executor: racer).createOrder(playerID: player, now: now)
            }
            let orders = try results.map { try $0.get() }
            #expect(Set(orders.map(\.publicID)).count == 1)
            #expect(try SQLOrderRepository(executor: connection).orders(playerID: player) == [orders[0]])
        }
    }

    @Test func concurrentCheckoutsForOnePlayerStoreOneOrderAndHandTheOthersIt() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let now = now
            // Each tab planned a new order and opened a session of its own at the provider.
            let results = raceOnConnections(30, url: url) { index, racer in
                let checkout = Order.Checkout(sessionID: "cs_\(index)", url: "https://pay.example/cs_\(index)", expiresAt: now.addingTimeInterval(3600))
                return try SQLOrderRepository(executor: racer).createOrder(
                    publicID: "ord_tab\(index)", playerID: player, amount: Money(minorUnits: 299, currency: "GBP"),
                    discountCode: nil, checkout: checkout, now: now)
            }
            let stored = try results.map { try $0.get() }
            let created = stored.compactMap { outcome -> Order? in
                if case .created(let order) = outcome { return order }
                return nil
            }
            #expect(created.count == 1)
            guard let first = created.first else { return }
            #expect(stored.filter { $0 == .existing(first) }.count == 29)
            #expect(try SQLOrderRepository(executor: connection).orders(playerID: player) == [first])
        }
    }

    @Test func paymentsOfOneOrderOnManyConnectionsPayItOnceAndGrantOnce() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let order = try SQLOrderRepository(executor: connection).createOrder(playerID: player, now: now)
            let now = now
            let results = raceOnConnections(30, url: url) { index, racer in
                try SQLOrderRepository(executor: racer)
                    .markPaid(orderID: order.publicID, providerEventID: "evt_\(index)", now: now.addingTimeInterval(Double(index)))
            }
            let paid = try results.map { try $0.get() }
            // Every caller sees the one payment that won, with its event and time.
            #expect(Set(paid.map(\.providerEventID)).count == 1)
            #expect(paid.allSatisfy { $0 == paid[0] && $0.status == .paid })
            let entitlement = try SQLEntitlementRepository(executor: connection).unlimited(playerID: player)
            #expect(entitlement?.source == .order && entitlement?.reference == order.publicID && entitlement?.grantedAt == paid[0].paidAt)
            #expect(try connection.execute("SELECT count(*) FROM unlimited_entitlements").first?.int(at: 0) == 1)
        }
    }

    /// The player redeems an unlock code while their payment lands: whichever commits first,
    /// the two never both count (a redemption refused as "already unlimited" keeps the code).
    @Test func aPaymentAndAnUnlockRedemptionAtOnceGrantOnceAndCountTheCodeOnlyIfItGranted() throws {
        try withRaceDatabase { url, connection in
            try SQLCodeRepository(executor: connection).create(code: "PRESS-2026", kind: .unlock, now: utc("2026-01-01T00:00:00Z"))
            let players = SQLPlayerRepository(executor: connection)
            let orders = SQLOrderRepository(executor: connection)
            var pairs: [(player: Int64, order: String)] = []
            for index in 0..<15 {
                let player = try addRacer(players, "\(index)").id
                pairs.append((player, try orders.createOrder(playerID: player, now: now).publicID))
            }
            let now = now
            let racers = pairs
            let results = raceOnConnections(30, url: url) { index, racer -> String in
                let (player, order) = racers[index / 2]
                if index % 2 == 0 {
                    try SQLOrderRepository(executor: racer).markPaid(orderID: order, providerEventID: "evt_\(index)", now: now)
                    return "paid"
                }
                do {
                    try SQLCodeRepository(executor: racer).redeem(code: "PRESS2026", playerID: player, now: now)
                    return "redeemed"
                } catch let error as StoreError where error.code == .conflict {
                    return "refused"
                }
            }
            let outcomes = try results.map { try $0.get() }
            let redeemed = outcomes.filter { $0 == "redeemed" }.count
            #expect(outcomes.filter { $0 == "paid" }.count == 15)
            #expect(redeemed + outcomes.filter { $0 == "refused" }.count == 15)
            // A redemption counted only where the code granted the player's unlimited play.
            let byCode = try connection.execute("SELECT count(*) FROM unlimited_entitlements WHERE source = 'code'").first?.int(at: 0)
            #expect(byCode == redeemed)
            #expect(try SQLCodeRepository(executor: connection).code("PRESS2026").redemptions == redeemed)
            #expect(try connection.execute("SELECT count(*) FROM unlimited_entitlements").first?.int(at: 0) == 15)
        }
    }
}
