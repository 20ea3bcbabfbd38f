import Foundation

/// The price a player would pay for unlimited play now.
public struct PriceDue: Sendable, Equatable {
    /// What to charge: the base price, or the best live discount the player redeemed.
    public let amount: Money
    /// The base price (£2.99, configurable: docs/API.md, "Unlimited play").
    public let base: Money
    /// The discount code that set `amount`; nil when the base price applies.
    public let discountCode: String?
    /// When that discount stops applying; nil without a discount or without an expiry.
    public let discountExpiresAt: Date?

    public init(amount: Money, base: Money, discountCode: String?, discountExpiresAt: Date?) {
        self.amount = amount
        self.base = base
        self.discountCode = discountCode
        self.discountExpiresAt = discountExpiresAt
    }
}

/// An order for unlimited play.
public struct Order: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// Created, not paid yet.
        case pending
        /// Paid: the player has unlimited play.
        case paid
        /// Cancelled by the player before it was paid. Stored as `pending` with `cancelled_at`
        /// (Migrations/0006_order_checkout.sql): a late payment still pays it, since the
        /// provider took the money.
        case cancelled
    }

    /// The provider's hosted checkout for the order, when one was made.
    public struct Checkout: Sendable, Equatable {
        /// The provider's session id, e.g. `cs_test_a1…`.
        public let sessionID: String
        /// The page the player pays on.
        public let url: String
        /// When the provider stops taking payment there; nil when it did not say.
        public let expiresAt: Date?

        public init(sessionID: String, url: String, expiresAt: Date?) {
            self.sessionID = sessionID
            self.url = url
            self.expiresAt = expiresAt
        }
    }

    /// The id the client and the payment provider see, e.g. `ord_k3v9…` (never the rowid).
    public let publicID: String
    public let playerID: Int64
    /// The price due when the order was made; it does not change afterwards.
    public let amount: Money
    /// The discount code that set the amount, if any.
    public let discountCode: String?
    public let status: Status
    public let createdAt: Date
    public let paidAt: Date?
    /// The provider's event id (or the operator's note) that paid it.
    public let providerEventID: String?
    /// The provider's checkout session; nil for an order made without one.
    public let checkout: Checkout?
    /// When the player cancelled it (also kept when a late payment paid it afterwards).
    public let cancelledAt: Date?

    public init(
        publicID: String, playerID: Int64, amount: Money, discountCode: String?, status: Status,
        createdAt: Date, paidAt: Date?, providerEventID: String?, checkout: Checkout? = nil, cancelledAt: Date? = nil
    ) {
        self.checkout = checkout
        self.cancelledAt = cancelledAt
        self.publicID = publicID
        self.playerID = playerID
        self.amount = amount
        self.discountCode = discountCode
        self.status = status
        self.createdAt = createdAt
        self.paidAt = paidAt
        self.providerEventID = providerEventID
    }
}

extension Order {
    /// Whether the player can still pay on the order's checkout page at `now`: unpaid, not
    /// cancelled, with a session whose expiry (if the provider gave one) is still ahead.
    public func checkoutIsOpen(at now: Date) -> Bool {
        guard status == .pending, let checkout else { return false }
        return checkout.expiresAt.map { $0 > now } ?? true
    }
}

/// What ``OrderRepository/checkoutPlan(playerID:now:)`` found.
public enum CheckoutPlan: Sendable, Equatable {
    /// A pending order whose checkout page is still open: send the player there.
    case existing(Order)
    /// Open a checkout session for a new order with this id at this price.
    case new(publicID: String, price: PriceDue)
}

/// What ``OrderRepository/createOrder(publicID:playerID:amount:discountCode:checkout:now:)`` stored.
public enum StoredCheckout: Sendable, Equatable {
    /// The new order, with the session just opened.
    case created(Order)
    /// Another purchase by the same player (another tab, another server process) stored an
    /// order at this price first, and its page is still open: that order; the new session is
    /// not stored (close it at the provider).
    case existing(Order)
}

extension PriceDue {
    /// The price due at `now` given the codes the player redeemed: the lowest live discount in
    /// the base price's currency that is below the base price, else the base price.
    package static func best(base: Money, redeemed: [PromoCode], now: Date) -> PriceDue {
        var best: (price: Money, code: PromoCode)?
        for code in redeemed {
            guard case .discount(let price) = code.kind, price.currency == base.currency,
                  price.minorUnits < base.minorUnits, code.isLive(at: now)
            else { continue }
            if best == nil || price.minorUnits < best!.price.minorUnits {
                best = (price, code)
            }
        }
        return PriceDue(amount: best?.price ?? base, base: base, discountCode: best?.code.code,
                        discountExpiresAt: best?.code.expiresAt)
    }
}

extension Order {
    /// `ord_` and 24 characters of lowercase base32 (120 random bits from the system's
    /// cryptographic generator): unguessable, so one player cannot find another's order.
    package static func newPublicID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var generator = SystemRandomNumberGenerator()
        return "ord_" + String((0..<24).map { _ in alphabet[Int(generator.next(upperBound: UInt8(32)))] })
    }

    /// The event id (or operator's note) that pays an order, as every backend accepts it:
    /// 1 to 255 bytes (`.invalid` otherwise).
    package static func validatedProviderEventID(_ eventID: String) throws -> String {
        guard !eventID.isEmpty, eventID.utf8.count <= 255 else {
            throw StoreError(.invalid, "The payment event id must be 1 to 255 bytes.", field: "providerEventID")
        }
        return eventID
    }

    // The refusals every backend gives about orders, in the same words.

    package static func unknown(_ publicID: String) -> StoreError {
        StoreError(.notFound, "There is no order \(publicID).", field: "order")
    }

    package static var nothingToBuy: StoreError {
        StoreError(.conflict, "You already have unlimited play; there is nothing to buy.", field: "playerID")
    }

    package static func paidCannotBeCancelled(_ publicID: String) -> StoreError {
        StoreError(.conflict, "Order \(publicID) is paid; a paid order cannot be cancelled.", field: "order")
    }
}
