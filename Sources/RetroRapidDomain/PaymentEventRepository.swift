import Foundation

/// The payment provider's events as ``PaymentWebhook`` hands them over, verified and parsed.
public protocol PaymentEventRepository {
    /// In one write: an event id handled before is answered with
    /// ``PaymentWebhook/Outcome/alreadyHandled(eventID:)`` and does nothing; otherwise the order
    /// named by `paying` (when not nil) is paid, granting unlimited play, and the event is kept.
    /// - Throws: `StoreError(.notFound)` for an unknown order (nothing is kept, so the
    ///   provider's retry can succeed later).
    func record(eventID: String, type: String, paying orderID: String?, now: Date) throws -> PaymentWebhook.Outcome
}
