import Foundation
import RetroRapidDomain

/// SQLite's ``PaymentEventRepository``: table `webhook_events`, written in the IMMEDIATE
/// transaction that pays the order, so an event is never kept without its payment.
public struct SQLitePaymentEventRepository: PaymentEventRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }

    public func record(eventID: String, type: String, claim: PaymentClaim?, now: Date) throws -> PaymentWebhook.Outcome {
        try database.transaction(.immediate) { db in
            let seen = try db.prepare("SELECT 1 FROM webhook_events WHERE event_id = ?").query([eventID]) { _ in true }
            if !seen.isEmpty { return .alreadyHandled(eventID: eventID) }

            var outcome = PaymentWebhook.Outcome.ignored(eventID: eventID, type: type)
            var orderRowID: Int64?
            if let claim {
                let orderID = claim.orderID
                // Throws for an unknown order: nothing kept, the provider's retry may succeed.
                if let reason = claim.refusal(for: try SQLiteOrderRepository.order(publicID: orderID, in: db)) {
                    outcome = .refused(eventID: eventID, orderID: orderID, reason: reason)
                } else {
                    let order = try SQLiteOrderRepository.markPaid(orderID: orderID, providerEventID: eventID, now: now, in: statements)
                    orderRowID = try db.prepare("SELECT id FROM orders WHERE public_id = ?").query([orderID]) { $0.int64(at: 0) }.first
                    outcome = .paid(order)
                }
            }
            try db.prepare("INSERT INTO webhook_events (event_id, type, order_id, received_at) VALUES (?, ?, ?, ?)")
                .execute([eventID, type, orderRowID, UTCCivilTime.text(now)])
            return outcome
        }
    }
}
