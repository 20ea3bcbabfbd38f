import Foundation

/// The payment provider's webhook: the only way (besides the operator's CLI) an order becomes
/// paid. No card data reaches this server; the provider tells it, signed, that an order was paid.
///
/// It follows Stripe's webhook protocol (docs/API.md, "Paying through a hosted checkout"):
/// the `checkout.session.completed` event, signed in the `Stripe-Signature` header. The older
/// `Payment-Signature` header and `order.paid` event, the same scheme, are still accepted.
///
/// **The request.** The server hands over the raw body bytes exactly as received (the signature
/// is over those bytes, so they must not be re-encoded) and the signature header:
///
///     Stripe-Signature: t=1767225600,v1=5f2b…(64 hex digits)
///
/// `t` is the Unix time in seconds when the provider signed; `v1` is the lowercase or uppercase
/// hex of `HMAC-SHA256(secret, "<t>.<raw body>")`, the `t` text exactly as in the header. Several
/// `v1` entries may appear (while the provider rotates its secret); one matching is enough.
/// Other keys (`v0=…`) are ignored, in the manner of Stripe's `Stripe-Signature`.
///
/// **The body** is a JSON object; unknown fields are ignored:
///
///     {"id": "evt_1Nx…", "type": "checkout.session.completed",
///      "data": {"object": {"id": "cs_test_a1…", "client_reference_id": "ord_k3v9…",
///                          "amount_total": 299, "currency": "gbp",
///                          "payment_status": "paid", "metadata": {"order": "ord_k3v9…"}}}}
///
/// - `id`: the provider's event id, unique per event and the same on every retry (1–255 bytes).
/// - `type`: `checkout.session.completed` with `payment_status` `paid`, and
///   `checkout.session.async_payment_succeeded`, pay the order named by the session's
///   `client_reference_id` (or else `metadata.order`); the legacy `order.paid` pays the order
///   in `order`. Any other event (a completed session still `unpaid`, an expired session) is
///   recorded and ignored.
/// - A session pays its order only when it is the session the order opened (`id`), for the
///   order's amount (`amount_total`) in its currency (``PaymentClaim/refusal(for:)``).
///   Otherwise the event is recorded as refused and pays nothing: answered with a success all
///   the same, since the provider would only send the same event again.
/// A payment for an order the player cancelled pays it all the same (the money was taken);
/// the order keeps its `cancelled_at` and the server logs it for the operator.
///
/// **Checks, in order**, each a refusal that changes nothing: a missing or malformed header,
/// a signature that does not match, or a timestamp more than `tolerance` away from `now` in
/// either direction → `.unauthorized`; a body that is not that JSON → `.invalid`; an unknown
/// order → `.notFound` (not recorded, so the provider's retry can succeed later).
/// Then, in one IMMEDIATE transaction: an event id already handled is answered with
/// ``Outcome/alreadyHandled(eventID:)`` and does nothing; a session that is not the order's
/// is ``Outcome/refused(eventID:orderID:reason:)`` and only recorded; otherwise the order is
/// paid (granting unlimited play) and the event recorded in `webhook_events`, together.
public struct PaymentWebhook {
    /// The header the server reads the signature from (Stripe's).
    public static let signatureHeaderName = "Stripe-Signature"
    /// The header of the protocol before the hosted checkout, read when Stripe's is absent.
    public static let legacySignatureHeaderName = "Payment-Signature"
    /// The legacy event type that pays the order in `order`.
    public static let orderPaidType = "order.paid"
    /// Stripe's event for a finished checkout (paid when its `payment_status` is `paid`).
    public static let sessionCompletedType = "checkout.session.completed"
    /// Stripe's event for a delayed payment method that has now paid.
    public static let asyncPaymentSucceededType = "checkout.session.async_payment_succeeded"

    /// What a verified event did. Every outcome is a success for the provider (HTTP 2xx), so it
    /// stops retrying.
    public enum Outcome: Sendable, Equatable {
        /// The order is paid and its player has unlimited play (also when the order had already
        /// been paid by the operator or an earlier event: paying is idempotent).
        case paid(Order)
        /// This event id was handled before; nothing was done again.
        case alreadyHandled(eventID: String)
        /// A type other than `order.paid`: recorded, nothing else done.
        case ignored(eventID: String, type: String)
        /// A paid session that is not the one the order opened, or not for its amount and
        /// currency: recorded, nothing paid. `reason` says which, for the operator's log.
        case refused(eventID: String, orderID: String, reason: String)
    }

    /// Where handled events are kept, and orders paid with them.
    public let events: any PaymentEventRepository
    /// How far the signed timestamp may be from `now`, either way, in seconds (300 by default).
    public let tolerance: TimeInterval
    private let secret: [UInt8]

    /// - Parameters:
    ///   - secret: the shared secret as configured (its UTF-8 bytes are the HMAC key). Empty
    ///     means not configured: every request is then refused with `.unauthorized`.
    ///   - tolerance: seconds between the signed timestamp and `now` allowed either way.
    public init(events: any PaymentEventRepository, secret: String, tolerance: TimeInterval = 300) {
        self.init(events: events, secret: Array(secret.utf8), tolerance: tolerance)
    }

    public init(events: any PaymentEventRepository, secret: [UInt8], tolerance: TimeInterval = 300) {
        precondition(tolerance >= 0, "the webhook tolerance must not be negative")
        self.events = events
        self.secret = secret
        self.tolerance = tolerance
    }

    /// Verifies and acts on one webhook request. See the type's documentation for the checks.
    /// - Parameters:
    ///   - body: the raw request body, byte for byte.
    ///   - signatureHeader: the value of ``signatureHeaderName``, nil when absent.
    @discardableResult
    public func handle(body: [UInt8], signatureHeader: String?, now: Date) throws -> Outcome {
        try verify(body: body, signatureHeader: signatureHeader, now: now)
        let event = try Self.parse(body)
        return try events.record(eventID: event.id, type: event.type, claim: event.claim, now: now)
    }

    /// The header value a provider would send for `body` signed at `timestamp`: for tests, the
    /// load generator and the operator's tooling.
    public static func signatureHeader(body: [UInt8], secret: [UInt8], timestamp: Date) -> String {
        let t = String(Int64(timestamp.timeIntervalSince1970.rounded(.down)))
        let code = HMACSHA256.authenticationCode(for: Array((t + ".").utf8) + body, key: secret)
        return "t=\(t),v1=\(SHA256.hex(code))"
    }

    // MARK: - Checks

    private func verify(body: [UInt8], signatureHeader: String?, now: Date) throws {
        guard !secret.isEmpty else {
            throw StoreError(.unauthorized, "No webhook secret is configured, so no payment webhook can be verified; set the webhook secret.", field: "signature")
        }
        guard let signatureHeader, let header = Self.parseHeader(signatureHeader) else {
            throw StoreError(.unauthorized, "Missing or malformed \(Self.signatureHeaderName) header; expected t=<unix seconds>,v1=<hex HMAC-SHA256>.", field: "signature")
        }
        let expected = HMACSHA256.authenticationCode(for: Array((header.timestampText + ".").utf8) + body, key: secret)
        var matched = false
        for candidate in header.signatures {
            // Every candidate is compared, so the time taken does not say which one matched.
            if HMACSHA256.constantTimeEquals(expected, HMACSHA256.bytes(hex: candidate) ?? []) { matched = true }
        }
        guard matched else {
            throw StoreError(.unauthorized, "The webhook signature does not match this body; check the shared secret.", field: "signature")
        }
        let skew = now.timeIntervalSince1970 - TimeInterval(header.timestamp)
        guard abs(skew) <= tolerance else {
            throw StoreError(.unauthorized, "The webhook was signed \(Int(abs(skew).rounded())) s \(skew > 0 ? "ago" : "in the future"), beyond the \(Int(tolerance)) s allowed; a replay, or a clock is wrong.", field: "signature")
        }
    }

    /// `t=<digits>,v1=<hex>[,v1=<hex>…]`; nil when `t` is missing, repeated or not digits, or
    /// when there is no `v1`.
    package static func parseHeader(_ header: String) -> (timestampText: String, timestamp: Int64, signatures: [String])? {
        var timestampText: String?
        var signatures: [String] = []
        for item in header.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let key = pair[..<equals], value = String(pair[pair.index(after: equals)...])
            switch key {
            case "t":
                guard timestampText == nil else { return nil }
                timestampText = value
            case "v1":
                signatures.append(value)
            default:
                continue
            }
        }
        guard let timestampText, (1...12).contains(timestampText.utf8.count),
              timestampText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let timestamp = Int64(timestampText), !signatures.isEmpty
        else { return nil }
        return (timestampText, timestamp, signatures)
    }

    struct Event: Decodable {
        let id: String
        let type: String
        let order: String?
        let data: EventData?

        struct EventData: Decodable {
            let object: Session?
        }

        /// The fields of Stripe's Checkout Session object this server reads.
        struct Session: Decodable {
            let id: String?
            let client_reference_id: String?
            let payment_status: String?
            /// Decoded as Int64: a number that is not a whole one in range refuses the body.
            let amount_total: Int64?
            let currency: String?
            let metadata: [String: String]?

            var order: String? { client_reference_id ?? metadata?["order"] }
        }

        /// The order this event pays; nil for an event that pays nothing.
        var paidOrder: String? { claim?.orderID }

        /// What this event says was paid; nil for an event that pays nothing.
        var claim: PaymentClaim? {
            let session = data?.object
            let described = session.map { PaymentClaim.Session(id: $0.id, amountTotal: $0.amount_total, currency: $0.currency) }
            switch type {
            case PaymentWebhook.orderPaidType:
                return order.map { PaymentClaim(orderID: $0) }
            case PaymentWebhook.sessionCompletedType:
                guard session?.payment_status == "paid", let order = session?.order else { return nil }
                return PaymentClaim(orderID: order, session: described)
            case PaymentWebhook.asyncPaymentSucceededType:
                return session?.order.map { PaymentClaim(orderID: $0, session: described) }
            default:
                return nil
            }
        }
    }

    static func parse(_ body: [UInt8]) throws -> Event {
        let event: Event
        do {
            event = try JSONDecoder().decode(Event.self, from: Data(body))
        } catch {
            throw StoreError(.invalid, "The webhook body is not the expected JSON event {\"id\": …, \"type\": …, \"data\": {\"object\": …}}.", field: "body")
        }
        guard !event.id.isEmpty, event.id.utf8.count <= 255 else {
            throw StoreError(.invalid, "The webhook event id must be 1 to 255 bytes.", field: "id")
        }
        if event.type == orderPaidType, (event.order ?? "").isEmpty {
            throw StoreError(.invalid, "An order.paid event must name the order it paid.", field: "order")
        }
        let pays = event.type == asyncPaymentSucceededType || (event.type == sessionCompletedType && event.data?.object?.payment_status == "paid")
        if pays, (event.paidOrder ?? "").isEmpty {
            throw StoreError(.invalid, "A paid \(event.type) event must name its order in data.object.client_reference_id.", field: "client_reference_id")
        }
        return event
    }
}
