import Foundation
import RetroRapidDomain

/// PostgreSQL's ``PaymentEventRepository``: table `webhook_events`, written in the transaction
/// that pays the order, so an event is never kept without its payment.
///
/// How "an event is handled once" stays exact when the provider delivers it to several nodes
/// at once (READ COMMITTED): the event's row is claimed first, `INSERT … ON CONFLICT
/// (event_id) DO NOTHING`. A second delivery's insert waits on the first's uncommitted key:
/// if the first commits, the second inserts nothing and answers `.alreadyHandled`; if the
/// first rolls back (an unknown order), the second goes ahead. Then the order is paid
/// (``PostgresOrderRepository``, idempotent and locked) and the row names it, all in one
/// transaction.
public struct PostgresPaymentEventRepository: PaymentEventRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    public func record(eventID: String, type: String, claim: PaymentClaim?, now: Date) throws -> PaymentWebhook.Outcome {
        try connection.transaction { db in
            let claimed = try db.execute("""
                INSERT INTO webhook_events (event_id, type, order_id, received_at) VALUES ($1, $2, NULL, $3)
                ON CONFLICT (event_id) DO NOTHING
                """, [eventID, type, UTCCivilTime.text(now)])
            guard claimed.affectedRows == 1 else { return .alreadyHandled(eventID: eventID) }
            guard let claim else { return .ignored(eventID: eventID, type: type) }
            let orderID = claim.orderID
            // Throws for an unknown order: the claim rolls back, the provider's retry may succeed.
            if let reason = claim.refusal(for: try PostgresOrderRepository.order(publicID: orderID, in: db)) {
                return .refused(eventID: eventID, orderID: orderID, reason: reason)
            }
            let order = try PostgresOrderRepository.markPaid(orderID: orderID, providerEventID: eventID, now: now, in: db)
            try db.execute("UPDATE webhook_events SET order_id = $1 WHERE event_id = $2",
                           [try PostgresOrderRepository.rowID(publicID: orderID, in: db), eventID])
            return .paid(order)
        }
    }
}
