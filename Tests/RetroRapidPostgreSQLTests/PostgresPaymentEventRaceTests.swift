import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidStorageFixtures
import Testing

/// The payment provider's events against a real server, delivered to many nodes at once (its
/// retries overlap): each event id is handled once.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresPaymentEventRaceTests {
    let now = utc("2026-01-10T00:00:00Z")

    @Test func oneEventDeliveredManyTimesAtOnceIsRecordedAndPaysOnce() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let order = try SQLOrderRepository(executor: connection).createOrder(playerID: player, now: now)
            let now = now
            let results = raceOnConnections(30, url: url) { index, racer in
                try SQLPaymentEventRepository(executor: racer)
                    .record(eventID: "evt_1", type: "order.paid", paying: order.publicID, now: now.addingTimeInterval(Double(index)))
            }
            let outcomes = try results.map { try $0.get() }
            let paid = outcomes.compactMap { outcome -> Order? in
                if case .paid(let order) = outcome { return order }
                return nil
            }
            #expect(paid.count == 1)
            #expect(outcomes.filter { $0 == .alreadyHandled(eventID: "evt_1") }.count == 29)
            #expect(paid.first?.providerEventID == "evt_1")
            let rows = try connection.execute("SELECT e.event_id, o.public_id FROM webhook_events e JOIN orders o ON o.id = e.order_id")
                .map { [$0.string(at: 0), $0.string(at: 1)] }
            #expect(rows == [["evt_1", order.publicID]])
            #expect(try connection.execute("SELECT count(*) FROM unlimited_entitlements").first?.int(at: 0) == 1)
        }
    }

    @Test func manyEventsForOneOrderAtOnceAreEachRecordedAndPayItOnce() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let order = try SQLOrderRepository(executor: connection).createOrder(playerID: player, now: now)
            let now = now
            let results = raceOnConnections(30, url: url) { index, racer in
                try SQLPaymentEventRepository(executor: racer)
                    .record(eventID: "evt_\(index)", type: "order.paid", paying: order.publicID, now: now)
            }
            let paid = try results.map { outcome -> Order? in
                if case .paid(let order) = try outcome.get() { return order }
                return nil
            }
            #expect(paid.allSatisfy { $0 != nil && $0 == paid[0] })
            #expect(try connection.execute("SELECT count(*) FROM webhook_events WHERE order_id IS NOT NULL").first?.int(at: 0) == 30)
            let stored = try SQLOrderRepository(executor: connection).order(publicID: order.publicID)
            #expect(stored == paid[0])
            #expect(try connection.execute("SELECT count(*) FROM unlimited_entitlements").first?.int(at: 0) == 1)
        }
    }

    /// A delivery for an unknown order rolls back: the same id delivered meanwhile for a real
    /// order is not told "already handled" by a row that never commits.
    @Test func aRefusedDeliveryDoesNotHoldTheEventIDForOthers() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let order = try SQLOrderRepository(executor: connection).createOrder(playerID: player, now: now)
            let now = now
            let results = raceOnConnections(20, url: url) { index, racer in
                try SQLPaymentEventRepository(executor: racer)
                    .record(eventID: "evt_1", type: "order.paid", paying: index % 2 == 0 ? "ord_nosuchorder" : order.publicID, now: now)
            }
            // Every delivery naming the real order is paid or already handled, and one paid.
            let real = results.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            let outcomes = try real.map { try $0.get() }
            #expect(outcomes.filter { if case .paid = $0 { return true } else { return false } }.count == 1)
            // A delivery naming the unknown order is refused, unless the real one committed first.
            for result in results.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
                switch result {
                case .success(let outcome): #expect(outcome == .alreadyHandled(eventID: "evt_1"))
                case .failure(let error): #expect((error as? StoreError)?.code == .notFound)
                }
            }
            #expect(try SQLOrderRepository(executor: connection).order(publicID: order.publicID).status == .paid)
            #expect(try connection.execute("SELECT count(*) FROM webhook_events").first?.int(at: 0) == 1)
        }
    }
}
