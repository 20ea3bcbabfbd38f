import Foundation
import RetroRapidDomain
import RetroRapidSQL

/// Orders for unlimited play (docs/API.md, "Unlimited play").
///
/// An order records the price due when it is made. It becomes paid only through the payment
/// provider's verified webhook (``PaymentWebhook``) or the operator's CLI, both through
/// ``markPaid(orderID:providerEventID:now:)``, which grants unlimited play in the same
/// transaction. No card data ever reaches this server.
///
/// Used from one thread at a time, like its ``Database``.
public struct SQLiteOrderRepository: OrderRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor
    /// Unlimited play's price without a discount.
    public let basePrice: Money

    /// - Parameter basePrice: a positive amount in a three-letter uppercase currency (£2.99 by
    ///   default; `ServerConfiguration` validates the configured one before it gets here).
    public init(database: Database, basePrice: Money = .defaultUnlimitedPrice, statements: SQLiteExecutor? = nil) {
        precondition((try? basePrice.validatedPrice(field: "basePrice")) == basePrice,
                     "the base price must be positive with an uppercase three-letter currency, not \(basePrice)")
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
        self.basePrice = basePrice
    }

    /// The price due now: the base price, or the lowest price among the discount codes the player
    /// redeemed that are live at `now` (not disabled, not expired) and in the base price's
    /// currency. A discount above the base price is ignored. `.notFound` for an unknown player.
    public func priceDue(playerID: Int64, now: Date) throws -> PriceDue {
        try database.transaction(.deferred) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            return try priceDue(playerID: playerID, now: now, in: db)
        }
    }

    /// An order for unlimited play at the price due now.
    ///
    /// A player who already has a pending order at the same price gets that order back rather
    /// than a second one (a double click, a reload); a pending order at another price stays as it
    /// is and a new one is made.
    /// - Throws: `.notFound` for an unknown player; `.conflict` when the player already has
    ///   unlimited play (nothing to buy).
    public func createOrder(playerID: Int64, now: Date) throws -> Order {
        try database.transaction(.immediate) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: statements) != nil {
                throw Order.nothingToBuy
            }
            let price = try priceDue(playerID: playerID, now: now, in: db)
            let existing = try Self.orders(
                where: "o.player_id = ? AND o.status = 'pending' AND o.amount_minor = ? AND o.currency = ? ORDER BY o.id DESC LIMIT 1",
                [playerID, price.amount.minorUnits, price.amount.currency], in: db
            )
            if let order = existing.first { return order }

            let publicID = Order.newPublicID()
            try db.prepare("""
                INSERT INTO orders (public_id, player_id, amount_minor, currency, discount_code_id, status, created_at)
                VALUES (?, ?, ?, ?, (SELECT id FROM promo_codes WHERE code = ?), 'pending', ?)
                """).execute([publicID, playerID, price.amount.minorUnits, price.amount.currency, price.discountCode, UTCCivilTime.text(now)])
            return try Self.order(publicID: publicID, in: db)
        }
    }

    /// What buying needs next: the player's pending order whose checkout is still open (a
    /// double click, a reload, a player coming back to pay), or a new order id and the price due
    /// to open a checkout session for. Nothing is stored: the order is made by
    /// ``createOrder(publicID:playerID:amount:discountCode:checkout:now:)`` once the provider
    /// answered, so a provider that refuses leaves no order behind.
    /// - Throws: `.notFound` for an unknown player; `.conflict` when the player already has
    ///   unlimited play.
    public func checkoutPlan(playerID: Int64, now: Date) throws -> CheckoutPlan {
        try database.transaction(.deferred) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: statements) != nil {
                throw Order.nothingToBuy
            }
            let price = try priceDue(playerID: playerID, now: now, in: db)
            if let order = try Self.openOrder(playerID: playerID, amount: price.amount, now: now, in: db) { return .existing(order) }
            return .new(publicID: Order.newPublicID(), price: price)
        }
    }

    /// Stores an order made with the provider's checkout session (after ``checkoutPlan(playerID:now:)``
    /// said `.new` and the provider opened the session).
    ///
    /// Two purchases by one player at the same instant (two tabs, two processes on one
    /// database) can both be told `.new` and both open a session; the first to get here stores
    /// its order and the other gets that order back (`.existing`), so a player has at most one
    /// open order at a price. The check and the insert share one write transaction.
    /// - Throws: `.conflict` when the player got unlimited play meanwhile (the session is left
    ///   to expire unpaid), `.notFound` for an unknown player.
    public func createOrder(publicID: String, playerID: Int64, amount: Money, discountCode: String?,
                            checkout: Order.Checkout, now: Date) throws -> StoredCheckout {
        try database.transaction(.immediate) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: statements) != nil {
                throw Order.nothingToBuy
            }
            if let open = try Self.openOrder(playerID: playerID, amount: amount, now: now, in: db) {
                return .existing(open)
            }
            try db.prepare("""
                INSERT INTO orders (public_id, player_id, amount_minor, currency, discount_code_id, status, created_at,
                                    checkout_session_id, checkout_url, checkout_expires_at)
                VALUES (?, ?, ?, ?, (SELECT id FROM promo_codes WHERE code = ?), 'pending', ?, ?, ?, ?)
                """).execute([publicID, playerID, amount.minorUnits, amount.currency, discountCode, UTCCivilTime.text(now),
                           checkout.sessionID, checkout.url, checkout.expiresAt.map(UTCCivilTime.text)])
            return .created(try Self.order(publicID: publicID, in: db))
        }
    }

    /// Cancels the player's unpaid order: it is no longer offered for payment. Cancelling a
    /// cancelled order again returns it as it is.
    /// - Throws: `.notFound` (unknown or another player's), `.conflict` when it is paid.
    public func cancel(publicID: String, playerID: Int64, now: Date) throws -> Order {
        try database.transaction(.immediate) { db in
            guard let order = try Self.orders(where: "o.public_id = ? AND o.player_id = ?", [publicID, playerID], in: db).first else {
                throw Order.unknown(publicID)
            }
            switch order.status {
            case .paid:
                throw Order.paidCannotBeCancelled(publicID)
            case .cancelled:
                return order
            case .pending:
                try db.prepare("UPDATE orders SET cancelled_at = ? WHERE public_id = ? AND status = 'pending' AND cancelled_at IS NULL")
                    .execute([UTCCivilTime.text(now), publicID])
                return try Self.order(publicID: publicID, in: db)
            }
        }
    }

    /// The player's order. `.notFound` when there is no such order or it is another player's
    /// (the two are indistinguishable on purpose).
    public func order(publicID: String, playerID: Int64) throws -> Order {
        let found = try Self.orders(where: "o.public_id = ? AND o.player_id = ?", [publicID, playerID], in: database)
        guard let order = found.first else { throw Order.unknown(publicID) }
        return order
    }

    /// Any player's order, for the operator and the webhook. `.notFound` when unknown.
    public func order(publicID: String) throws -> Order {
        try Self.order(publicID: publicID, in: database)
    }

    /// The player's orders, newest first.
    public func orders(playerID: Int64) throws -> [Order] {
        try Self.orders(where: "o.player_id = ? ORDER BY o.id DESC", [playerID], in: database)
    }

    /// Marks the order paid and grants its player unlimited play, in one transaction.
    ///
    /// Paying a paid order again changes nothing and returns it as it is (with the first
    /// event id), so a provider's retry or an operator's repeat is harmless.
    /// - Parameters:
    ///   - orderID: the order's public id.
    ///   - providerEventID: the provider's event id, or the operator's note (e.g. `operator:alice`).
    /// - Throws: `.notFound` for an unknown order, `.invalid` for an empty event id.
    @discardableResult
    public func markPaid(orderID: String, providerEventID: String, now: Date) throws -> Order {
        _ = try Order.validatedProviderEventID(providerEventID)
        return try database.transaction(.immediate) { db in
            try Self.markPaid(orderID: orderID, providerEventID: providerEventID, now: now, in: statements)
        }
    }

    // MARK: - Inside a transaction

    func priceDue(playerID: Int64, now: Date, in db: Database) throws -> PriceDue {
        PriceDue.best(base: basePrice, redeemed: try SQLCodeRepository.redeemedCodes(playerID: playerID, in: statements).map(\.code), now: now)
    }

    static func markPaid(orderID: String, providerEventID: String, now: Date, in statements: SQLiteExecutor) throws -> Order {
        let db = statements.database
        let order = try order(publicID: orderID, in: db)
        guard order.status != .paid else { return order }
        try db.prepare("UPDATE orders SET status = 'paid', paid_at = ?, provider_event_id = ? WHERE public_id = ? AND status = 'pending'")
            .execute([UTCCivilTime.text(now), providerEventID, orderID])
        _ = try SQLEntitlementRepository.grant(playerID: order.playerID, source: .order, reference: orderID, now: now, in: statements)
        return try Self.order(publicID: orderID, in: db)
    }

    /// The player's newest pending order at `amount` whose checkout page is still open.
    static func openOrder(playerID: Int64, amount: Money, now: Date, in db: Database) throws -> Order? {
        try orders(
            where: "o.player_id = ? AND o.status = 'pending' AND o.cancelled_at IS NULL AND o.checkout_url IS NOT NULL AND o.amount_minor = ? AND o.currency = ? ORDER BY o.id DESC",
            [playerID, amount.minorUnits, amount.currency], in: db
        ).first(where: { $0.checkoutIsOpen(at: now) })
    }

    static func order(publicID: String, in db: Database) throws -> Order {
        guard let order = try orders(where: "o.public_id = ?", [publicID], in: db).first else {
            throw Order.unknown(publicID)
        }
        return order
    }

    private static func orders(where condition: String, _ values: [any DatabaseValueConvertible], in db: Database) throws -> [Order] {
        try db.prepare("""
            SELECT o.public_id, o.player_id, o.amount_minor, o.currency, c.code, o.status, o.created_at, o.paid_at, o.provider_event_id,
                   o.checkout_session_id, o.checkout_url, o.checkout_expires_at, o.cancelled_at
            FROM orders o LEFT JOIN promo_codes c ON c.id = o.discount_code_id
            WHERE \(condition)
            """).query(values) { row in
                guard var status = Order.Status(rawValue: row.string(at: 5)), status != .cancelled else {
                    throw StoreError.unreadable("orders.status holds unknown '\(row.string(at: 5))'")
                }
                let cancelledAt = row.isNull(at: 12) ? nil : try UTCCivilTime.storedDate(row.string(at: 12), column: "orders.cancelled_at")
                if status == .pending, cancelledAt != nil { status = .cancelled }
                let checkout: Order.Checkout? = row.isNull(at: 9) || row.isNull(at: 10) ? nil : Order.Checkout(
                    sessionID: row.string(at: 9), url: row.string(at: 10),
                    expiresAt: row.isNull(at: 11) ? nil : try UTCCivilTime.storedDate(row.string(at: 11), column: "orders.checkout_expires_at"))
                return Order(
                    publicID: row.string(at: 0),
                    playerID: row.int64(at: 1),
                    amount: Money(minorUnits: row.int64(at: 2), currency: row.string(at: 3)),
                    discountCode: row.isNull(at: 4) ? nil : row.string(at: 4),
                    status: status,
                    createdAt: try UTCCivilTime.storedDate(row.string(at: 6), column: "orders.created_at"),
                    paidAt: row.isNull(at: 7) ? nil : try UTCCivilTime.storedDate(row.string(at: 7), column: "orders.paid_at"),
                    providerEventID: row.isNull(at: 8) ? nil : row.string(at: 8),
                    checkout: checkout,
                    cancelledAt: cancelledAt
                )
            }
    }

}
