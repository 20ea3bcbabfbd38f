/// What a paying webhook event says was paid: the order it names and, for a checkout session,
/// the session, its amount and its currency.
///
/// An event naming an order is no proof that the order's price was paid: whoever can make the
/// provider sign a session (another product on the same account, a payment link, which takes
/// `client_reference_id` from its URL) can name any order in it. So a session pays an order
/// only when it is the very session the order opened, for the order's amount (the price due
/// when it was made, after any discount) in its currency (``refusal(for:)``).
public struct PaymentClaim: Sendable, Equatable {
    /// The checkout session as the event describes it (Stripe's Checkout Session object).
    public struct Session: Sendable, Equatable {
        /// `id`, e.g. `cs_test_a1…`.
        public let id: String?
        /// `amount_total`, in the currency's minor units.
        public let amountTotal: Int64?
        /// `currency`, ISO 4217 (Stripe writes it in lower case).
        public let currency: String?

        public init(id: String?, amountTotal: Int64?, currency: String?) {
            self.id = id
            self.amountTotal = amountTotal
            self.currency = currency
        }
    }

    /// The order's public id (`client_reference_id`, else `metadata.order`; `order` in the
    /// legacy `order.paid`).
    public let orderID: String
    /// The session paid; nil for the legacy `order.paid`, which describes none.
    public let session: Session?

    public init(orderID: String, session: Session? = nil) {
        self.orderID = orderID
        self.session = session
    }

    /// Why this claim may not pay `order`, or nil when it may. Only our own order's values
    /// are quoted: the event's are the provider's to log, not ours to repeat.
    public func refusal(for order: Order) -> String? {
        guard let session else { return nil }
        guard let checkout = order.checkout else {
            return "order \(order.publicID) opened no checkout session, so no session can pay it"
        }
        guard session.id == checkout.sessionID else {
            return "the event's checkout session is not the one order \(order.publicID) opened"
        }
        guard session.amountTotal == order.amount.minorUnits else {
            return "the session's amount_total is not order \(order.publicID)'s price, \(order.amount.minorUnits) minor units"
        }
        guard let currency = session.currency, currency.lowercased() == order.amount.currency.lowercased() else {
            return "the session's currency is not order \(order.publicID)'s, \(order.amount.currency)"
        }
        return nil
    }
}
