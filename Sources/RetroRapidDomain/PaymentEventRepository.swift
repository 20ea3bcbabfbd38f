import Foundation

/// The payment provider's events as ``PaymentWebhook`` hands them over, verified and parsed.
public protocol PaymentEventRepository {
    /// In one write: an event id handled before is answered with
    /// ``PaymentWebhook/Outcome/alreadyHandled(eventID:)`` and does nothing; a claim the order
    /// refuses (``PaymentClaim/refusal(for:)``: another session, amount or currency) is
    /// ``PaymentWebhook/Outcome/refused(eventID:orderID:reason:)`` and pays nothing; otherwise
    /// the order the claim names (when there is one) is paid, granting unlimited play. The
    /// event is kept in every case but the first.
    /// - Throws: `StoreError(.notFound)` for an unknown order (nothing is kept, so the
    ///   provider's retry can succeed later).
    func record(eventID: String, type: String, claim: PaymentClaim?, now: Date) throws -> PaymentWebhook.Outcome

    /// The provider's events that named the order `orderID` (its public id), oldest first.
    func events(orderID: String) throws -> [PaymentEvent]
}

/// One event the payment provider sent about an order, as kept: for the operator's console.
public struct PaymentEvent: Sendable, Equatable {
    public let eventID: String
    public let type: String
    public let receivedAt: Date

    public init(eventID: String, type: String, receivedAt: Date) {
        self.eventID = eventID
        self.type = type
        self.receivedAt = receivedAt
    }
}

extension PaymentEventRepository {
    /// An event that names its order and no session (the legacy `order.paid`, the operator's
    /// tools and tests).
    public func record(eventID: String, type: String, paying orderID: String?, now: Date) throws -> PaymentWebhook.Outcome {
        try record(eventID: eventID, type: type, claim: orderID.map { PaymentClaim(orderID: $0) }, now: now)
    }
}
