import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// The payment provider's signed webhook where only SQL can check (the stored event rows).
@Suite struct SQLitePaymentWebhookTests {
    static let secret = "whsec_test"
    static let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    /// A migrated database with one player and one pending order.
    struct Shop {
        let db: Database
        let player: Int64
        let order: Order
        let webhook: PaymentWebhook

        init(in folder: URL) throws {
            db = try migratedDatabase(in: folder, named: "webhook.sqlite")
            player = try insertPlayer(db, "p1")
            order = try SQLOrderRepository(executor: SQLiteExecutor(database: db)).createOrder(playerID: player, now: SQLitePaymentWebhookTests.now)
            webhook = PaymentWebhook(events: SQLPaymentEventRepository(executor: SQLiteExecutor(database: db)), secret: SQLitePaymentWebhookTests.secret)
        }

        func paidEvent(_ id: String, order: String? = nil) -> [UInt8] {
            Array(#"{"id":"\#(id)","type":"order.paid","order":"\#(order ?? self.order.publicID)"}"#.utf8)
        }

        func orderStatus() throws -> Order.Status {
            try SQLOrderRepository(executor: SQLiteExecutor(database: db)).order(publicID: order.publicID).status
        }
    }

    static func signed(_ body: [UInt8], at time: Date = now, secret: String = secret) -> String {
        PaymentWebhook.signatureHeader(body: body, secret: Array(secret.utf8), timestamp: time)
    }

    // Stays here: the webhook_events rows (event id, type) as stored; the webhook's rules are in
    // Tests/RetroRapidStorageTests/PaymentEventRepositoryContractTests.swift.
    @Test func eachHandledEventIsStoredOnceWithItsType() throws {
        try withTemporaryDirectory { folder in
            let shop = try Shop(in: folder)
            let paid = shop.paidEvent("evt_1")
            try shop.webhook.handle(body: paid, signatureHeader: Self.signed(paid), now: Self.now)
            #expect(try shop.db.column("SELECT event_id FROM webhook_events") == [.text("evt_1")])
            try shop.webhook.handle(body: paid, signatureHeader: Self.signed(paid), now: Self.now)
            let other = Array(#"{"id":"evt_r","type":"order.refunded","order":"\#(shop.order.publicID)","extra":{"a":1}}"#.utf8)
            try shop.webhook.handle(body: other, signatureHeader: Self.signed(other), now: Self.now)
            #expect(try shop.db.column("SELECT event_id || ' ' || type FROM webhook_events ORDER BY event_id")
                == [.text("evt_1 order.paid"), .text("evt_r order.refunded")])
            #expect(try shop.db.scalar("SELECT count(*) FROM unlimited_entitlements") == .integer(1))
        }
    }
}
