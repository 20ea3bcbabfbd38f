import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `ServiceSummaryRepository` (the console's day counts) and of the operator's
/// player search, run against every backend in `StorageBackends.all`.
@Suite struct ServiceSummaryRepositoryContractTests {
    @Test(arguments: StorageBackends.all) func aDayCountsOnlyWhatHappenedThatUTCDay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let storage = store.repositories()
            let yesterday = utc("2026-03-09T23:59:59Z"), today = utc("2026-03-10T00:00:00Z"), later = utc("2026-03-10T18:30:00Z")
            let (old, _) = try storage.players.createPlayer(displayName: "Old", deviceLabel: "", now: yesterday)
            let (ann, _) = try storage.players.createPlayer(displayName: "Ann", deviceLabel: "", now: today)
            let (bob, _) = try storage.players.createPlayer(displayName: "Bob", deviceLabel: "", now: later)
            _ = try storage.quota.consumePlay(playerID: old.id, now: yesterday)
            _ = try storage.quota.consumePlay(playerID: ann.id, now: today)
            _ = try storage.quota.consumePlay(playerID: bob.id, now: later)
            try storage.games.record(scoredGame(player: old.id, score: 5, endedAt: yesterday))
            try storage.games.record(scoredGame(player: ann.id, score: 7, endedAt: later))
            let order = try storage.orders.createOrder(playerID: bob.id, now: later)
            try storage.orders.markPaid(orderID: order.publicID, providerEventID: "evt_1", now: later)
            _ = try storage.orders.createOrder(playerID: ann.id, now: later)  // pending: not counted

            let day = try #require(UTCDay("2026-03-10"))
            #expect(try storage.summaries.summary(of: day)
                    == ServiceSummary(day: day, newPlayers: 2, gamesFinished: 1, playsUsed: 2, ordersPaid: 1))
            let before = try #require(UTCDay("2026-03-09"))
            #expect(try storage.summaries.summary(of: before)
                    == ServiceSummary(day: before, newPlayers: 1, gamesFinished: 1, playsUsed: 1, ordersPaid: 0))
            let empty = try #require(UTCDay("2026-03-11"))
            #expect(try storage.summaries.summary(of: empty)
                    == ServiceSummary(day: empty, newPlayers: 0, gamesFinished: 0, playsUsed: 0, ordersPaid: 0))
        }
    }

    @Test(arguments: StorageBackends.all) func anOperatorFindsAPlayerByIDNameOrDevice(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let now = utc("2026-03-10T12:00:00Z")
            let (sam, _) = try players.createPlayer(displayName: "Speedy Sam", deviceLabel: "phone", now: now)
            let (other, _) = try players.createPlayer(displayName: "Speedy", deviceLabel: "", now: now)
            let (twin, _) = try players.createPlayer(displayName: "speedy sam", deviceLabel: "", now: now)
            let device = try #require(try players.devices(playerID: sam.id).first).id
            #expect(try players.search(sam.publicID.lowercased(), limit: 20) == [sam])
            #expect(try players.search("  SPEEDY SAM ", limit: 20) == [sam, twin])
            #expect(try players.search("Speedy", limit: 20) == [other])
            #expect(try players.search(String(device), limit: 20) == [sam])
            #expect(try players.search("Spee", limit: 20) == [])  // whole names only
            #expect(try players.search("", limit: 20) == [])
            #expect(try players.search("99999999999999999999", limit: 20) == [])  // no row id is that large
            #expect(try players.search("speedy sam", limit: 1) == [sam])
            for limit in [0, 101] {
                #expect((#expect(throws: StoreError.self) { try players.search("x", limit: limit) })?.code == .invalid)
            }
        }
    }
}

/// The orders and provider events the console lists, on every backend.
@Suite struct ConsoleOrderReadsContractTests {
    @Test(arguments: StorageBackends.all) func theLatestOrdersComeNewestFirstByState(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let storage = store.repositories()
            let now = utc("2026-03-10T12:00:00Z")
            var orders: [Order] = []
            for index in 0..<3 {
                let (player, _) = try storage.players.createPlayer(displayName: "Buyer \(index)", deviceLabel: "", now: now)
                orders.append(try storage.orders.createOrder(playerID: player.id, now: now.addingTimeInterval(Double(index))))
            }
            try storage.paymentEvents.record(eventID: "evt_paid", type: "checkout.session.completed", paying: orders[0].publicID,
                                             now: now.addingTimeInterval(10))
            _ = try storage.orders.cancel(publicID: orders[1].publicID, playerID: orders[1].playerID, now: now.addingTimeInterval(11))
            #expect(try storage.orders.latest(status: nil, limit: 10).map(\.publicID) == orders.reversed().map(\.publicID))
            #expect(try storage.orders.latest(status: nil, limit: 2).map(\.publicID) == [orders[2].publicID, orders[1].publicID])
            #expect(try storage.orders.latest(status: .paid, limit: 10).map(\.publicID) == [orders[0].publicID])
            #expect(try storage.orders.latest(status: .cancelled, limit: 10).map(\.publicID) == [orders[1].publicID])
            #expect(try storage.orders.latest(status: .pending, limit: 10).map(\.publicID) == [orders[2].publicID])
            for limit in [0, 501] {
                #expect((#expect(throws: StoreError.self) { try storage.orders.latest(status: nil, limit: limit) })?.code == .invalid)
            }
            #expect(try storage.paymentEvents.events(orderID: orders[0].publicID)
                    == [PaymentEvent(eventID: "evt_paid", type: "checkout.session.completed", receivedAt: now.addingTimeInterval(10))])
            #expect(try storage.paymentEvents.events(orderID: orders[2].publicID) == [])
            #expect(try storage.paymentEvents.events(orderID: "ord_nosuchorder") == [])
        }
    }
}
