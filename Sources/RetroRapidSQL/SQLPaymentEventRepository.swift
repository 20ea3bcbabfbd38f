import Foundation
import RetroRapidDomain

/// The payment provider's events (`webhook_events`), on either backend, written in the
/// transaction that pays the order, so an event is never kept without its payment.
///
/// How "an event is handled once" stays exact when the provider delivers it twice at once (on
/// PostgreSQL to two nodes, at READ COMMITTED): the event's row is claimed first,
/// `INSERT … ON CONFLICT (event_id) DO NOTHING`. A second delivery's insert waits on the
/// first's uncommitted key: if the first commits, the second inserts nothing and answers
/// `.alreadyHandled`; if the first rolls back (an unknown order), the second goes ahead. Then
/// the order is paid (``SQLOrderRepository``, idempotent and locked) and the row names it, all
/// in one transaction. On SQLite the one write lock serialises the two deliveries outright.
public struct SQLPaymentEventRepository: PaymentEventRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    public func events(orderID: String) throws -> [PaymentEvent] {
        try executor.query("""
            SELECT e.event_id AS event_id, e.type AS type, e.received_at AS received_at
            FROM webhook_events e JOIN orders o ON o.id = e.order_id
            WHERE o.public_id = $1 ORDER BY e.received_at, e.event_id
            """, [orderID]).rows.map { row in
            PaymentEvent(eventID: try row.string("event_id"), type: try row.string("type"),
                         receivedAt: try UTCCivilTime.storedDate(row.string("received_at"), column: "webhook_events.received_at"))
        }
    }

    public func record(eventID: String, type: String, claim: PaymentClaim?, now: Date) throws -> PaymentWebhook.Outcome {
        try executor.writeTransaction {
            let claimed = try executor.query("""
                INSERT INTO webhook_events (event_id, type, order_id, received_at) VALUES ($1, $2, NULL, $3)
                ON CONFLICT (event_id) DO NOTHING
                """, [eventID, type, UTCCivilTime.text(now)])
            guard claimed.affectedRows == 1 else { return .alreadyHandled(eventID: eventID) }
            guard let claim else { return .ignored(eventID: eventID, type: type) }
            let orderID = claim.orderID
            // Throws for an unknown order: the claim rolls back, the provider's retry may succeed.
            if let reason = claim.refusal(for: try SQLOrderRepository.order(publicID: orderID, in: executor)) {
                return .refused(eventID: eventID, orderID: orderID, reason: reason)
            }
            let order = try SQLOrderRepository.markPaid(orderID: orderID, providerEventID: eventID, now: now, in: executor)
            try executor.query("UPDATE webhook_events SET order_id = $1 WHERE event_id = $2",
                               [try SQLOrderRepository.rowID(publicID: orderID, in: executor), eventID])
            return .paid(order)
        }
    }
}
