import Foundation
import RetroRapidDomain

/// Orders for unlimited play (docs/API.md, "Unlimited play"), on either backend. An order
/// records the price due when it is made (``PriceDue/best(base:redeemed:now:)``); it becomes
/// paid only through the payment provider's verified webhook (``PaymentWebhook``) or the
/// operator's CLI, both through ``markPaid(orderID:providerEventID:now:)``, which grants
/// unlimited play in the same transaction (``SQLEntitlementRepository``). No card data ever
/// reaches this server.
///
/// How each rule stays exact with many writers at once (on SQLite the one write lock
/// serialises them all; on PostgreSQL, at READ COMMITTED, the row locks below do):
/// * "one open order at a price" (both `createOrder` forms): the player's row is locked first,
///   then the open order is looked for and the new one inserted in that transaction, so of
///   concurrent purchases by one player the first stores its order and the others get it back;
/// * paying locks the player's row too, then the order's: two payments of one order are
///   serialised (the second finds it paid and changes nothing), a payment and a cancel cannot
///   cross, and a payment cannot interleave with the player redeeming an unlock code
///   (``SQLCodeRepository`` takes the same lock), so "already has unlimited play" is read
///   true. The order's update and the entitlement commit together.
public struct SQLOrderRepository: OrderRepository {
    public let executor: any SQLExecutor
    /// Unlimited play's price without a discount.
    public let basePrice: Money

    /// - Parameter basePrice: a positive amount in a three-letter uppercase currency (£2.99 by
    ///   default; `ServerConfiguration` validates the configured one before it gets here).
    public init(executor: any SQLExecutor, basePrice: Money = .defaultUnlimitedPrice) {
        precondition((try? basePrice.validatedPrice(field: "basePrice")) == basePrice,
                     "the base price must be positive with an uppercase three-letter currency, not \(basePrice)")
        self.executor = executor
        self.basePrice = basePrice
    }

    /// The price due now: the base price, or the lowest price among the discount codes the player
    /// redeemed that are live at `now` (not disabled, not expired) and in the base price's
    /// currency. A discount above the base price is ignored. `.notFound` for an unknown player.
    public func priceDue(playerID: Int64, now: Date) throws -> PriceDue {
        try executor.readTransaction {
            try SQLPlayerLookup.requirePlayer(playerID, in: executor)
            return try priceDueInTransaction(playerID: playerID, now: now)
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
        try executor.writeTransaction {
            try requireBuyer(playerID)
            let price = try priceDueInTransaction(playerID: playerID, now: now)
            if let order = try Self.orders(
                where: "o.player_id = $1 AND o.status = 'pending' AND o.amount_minor = $2 AND o.currency = $3 ORDER BY o.id DESC LIMIT 1",
                [playerID, price.amount.minorUnits, price.amount.currency], in: executor).first {
                return order
            }
            let publicID = Order.newPublicID()
            try executor.query("""
                INSERT INTO orders (public_id, player_id, amount_minor, currency, discount_code_id, status, created_at)
                VALUES ($1, $2, $3, $4, (SELECT id FROM promo_codes WHERE code = $5), 'pending', $6)
                """, [publicID, playerID, price.amount.minorUnits, price.amount.currency, price.discountCode, UTCCivilTime.text(now)])
            return try Self.order(publicID: publicID, in: executor)
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
        try executor.readTransaction {
            try SQLPlayerLookup.requirePlayer(playerID, in: executor)
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: executor) != nil { throw Order.nothingToBuy }
            let price = try priceDueInTransaction(playerID: playerID, now: now)
            if let order = try Self.openOrder(playerID: playerID, amount: price.amount, now: now, in: executor) { return .existing(order) }
            return .new(publicID: Order.newPublicID(), price: price)
        }
    }

    /// Stores an order made with the provider's checkout session (after ``checkoutPlan(playerID:now:)``
    /// said `.new` and the provider opened the session).
    ///
    /// Two purchases by one player at the same instant (two tabs, two nodes) can both be told
    /// `.new` and both open a session; the first to get here stores its order and the other
    /// gets that order back (`.existing`), so a player has at most one open order at a price.
    /// - Throws: `.conflict` when the player got unlimited play meanwhile (the session is left
    ///   to expire unpaid), `.notFound` for an unknown player.
    public func createOrder(publicID: String, playerID: Int64, amount: Money, discountCode: String?,
                            checkout: Order.Checkout, now: Date) throws -> StoredCheckout {
        try executor.writeTransaction {
            try requireBuyer(playerID)
            if let open = try Self.openOrder(playerID: playerID, amount: amount, now: now, in: executor) { return .existing(open) }
            try executor.query("""
                INSERT INTO orders (public_id, player_id, amount_minor, currency, discount_code_id, status, created_at,
                                    checkout_session_id, checkout_url, checkout_expires_at)
                VALUES ($1, $2, $3, $4, (SELECT id FROM promo_codes WHERE code = $5), 'pending', $6, $7, $8, $9)
                """, [publicID, playerID, amount.minorUnits, amount.currency, discountCode, UTCCivilTime.text(now),
                      checkout.sessionID, checkout.url, checkout.expiresAt.map(UTCCivilTime.text)])
            return .created(try Self.order(publicID: publicID, in: executor))
        }
    }

    /// Cancels the player's unpaid order: it is no longer offered for payment. Cancelling a
    /// cancelled order again returns it as it is.
    /// - Throws: `.notFound` (unknown or another player's), `.conflict` when it is paid.
    public func cancel(publicID: String, playerID: Int64, now: Date) throws -> Order {
        try executor.writeTransaction {
            // The order's row locked: a payment arriving now waits, and then pays it cancelled.
            guard let order = try Self.orders(where: "o.public_id = $1 AND o.player_id = $2\(executor.dialect.lockingRead(of: "o"))",
                                              [publicID, playerID], in: executor).first
            else { throw Order.unknown(publicID) }
            switch order.status {
            case .paid:
                throw Order.paidCannotBeCancelled(publicID)
            case .cancelled:
                return order
            case .pending:
                try executor.query("UPDATE orders SET cancelled_at = $1 WHERE public_id = $2 AND status = 'pending' AND cancelled_at IS NULL",
                                   [UTCCivilTime.text(now), publicID])
                return try Self.order(publicID: publicID, in: executor)
            }
        }
    }

    /// The player's order. `.notFound` when there is no such order or it is another player's
    /// (the two are indistinguishable on purpose).
    public func order(publicID: String, playerID: Int64) throws -> Order {
        guard let order = try Self.orders(where: "o.public_id = $1 AND o.player_id = $2", [publicID, playerID], in: executor).first
        else { throw Order.unknown(publicID) }
        return order
    }

    /// Any player's order, for the operator and the webhook. `.notFound` when unknown.
    public func order(publicID: String) throws -> Order {
        try Self.order(publicID: publicID, in: executor)
    }

    /// The player's orders, newest first.
    public func orders(playerID: Int64) throws -> [Order] {
        try Self.orders(where: "o.player_id = $1 ORDER BY o.id DESC", [playerID], in: executor)
    }

    /// The latest orders of every player (``OrderRepository/latest(status:limit:)``).
    public func latest(status: Order.Status?, limit: Int) throws -> [Order] {
        guard (1...500).contains(limit) else { throw StoreError(.invalid, "A page holds 1 to 500 orders.", field: "limit") }
        let condition: String
        switch status {
        case nil: condition = "1 = 1"
        case .paid?: condition = "o.status = 'paid'"
        case .pending?: condition = "o.status = 'pending' AND o.cancelled_at IS NULL"
        case .cancelled?: condition = "o.status = 'pending' AND o.cancelled_at IS NOT NULL"
        }
        return try Self.orders(where: "\(condition) ORDER BY o.id DESC LIMIT $1", [Int64(limit)], in: executor)
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
        let providerEventID = try Order.validatedProviderEventID(providerEventID)
        return try executor.writeTransaction {
            try Self.markPaid(orderID: orderID, providerEventID: providerEventID, now: now, in: executor)
        }
    }

    // MARK: - Inside a transaction

    /// The player exists and has nothing bought yet, with their row locked until commit.
    private func requireBuyer(_ playerID: Int64) throws {
        try SQLPlayerLookup.requirePlayer(playerID, in: executor, lockingRow: true)
        if try SQLEntitlementRepository.unlimited(playerID: playerID, in: executor) != nil { throw Order.nothingToBuy }
    }

    private func priceDueInTransaction(playerID: Int64, now: Date) throws -> PriceDue {
        PriceDue.best(base: basePrice, redeemed: try SQLCodeRepository.redeemedCodes(playerID: playerID, in: executor).map(\.code), now: now)
    }

    /// Pays the order unless it is paid; used by ``SQLPaymentEventRepository`` too.
    static func markPaid(orderID: String, providerEventID: String, now: Date, in db: any SQLExecutor) throws -> Order {
        let order = try order(publicID: orderID, in: db)
        guard order.status != .paid else { return order }
        // The player's row, then the order's, in the order every writer takes them.
        try SQLPlayerLookup.requirePlayer(order.playerID, in: db, lockingRow: true)
        guard let locked = try orders(where: "o.public_id = $1\(db.dialect.lockingRead(of: "o"))", [orderID], in: db).first else {
            throw Order.unknown(orderID)
        }
        guard locked.status != .paid else { return locked }
        try db.query("UPDATE orders SET status = 'paid', paid_at = $1, provider_event_id = $2 WHERE public_id = $3 AND status = 'pending'",
                     [UTCCivilTime.text(now), providerEventID, orderID])
        _ = try SQLEntitlementRepository.grant(playerID: order.playerID, source: .order, reference: orderID, now: now, in: db)
        return try Self.order(publicID: orderID, in: db)
    }

    /// The player's newest pending order at `amount` whose checkout page is still open.
    static func openOrder(playerID: Int64, amount: Money, now: Date, in db: any SQLExecutor) throws -> Order? {
        try orders(
            where: "o.player_id = $1 AND o.status = 'pending' AND o.cancelled_at IS NULL AND o.checkout_url IS NOT NULL AND o.amount_minor = $2 AND o.currency = $3 ORDER BY o.id DESC",
            [playerID, amount.minorUnits, amount.currency], in: db
        ).first(where: { $0.checkoutIsOpen(at: now) })
    }

    static func order(publicID: String, in db: any SQLExecutor) throws -> Order {
        guard let order = try orders(where: "o.public_id = $1", [publicID], in: db).first else { throw Order.unknown(publicID) }
        return order
    }

    /// The numeric id of the order with this public id (what `webhook_events.order_id` holds).
    static func rowID(publicID: String, in db: any SQLExecutor) throws -> Int64? {
        try db.query("SELECT id FROM orders WHERE public_id = $1", [publicID]).first?.int64("id")
    }

    private static func orders(where condition: String, _ values: [any SQLBindable], in db: any SQLExecutor) throws -> [Order] {
        try db.query("""
            SELECT o.public_id AS public_id, o.player_id AS player_id, o.amount_minor AS amount_minor, o.currency AS currency,
                   c.code AS discount_code, o.status AS status, o.created_at AS created_at, o.paid_at AS paid_at,
                   o.provider_event_id AS provider_event_id, o.checkout_session_id AS checkout_session_id,
                   o.checkout_url AS checkout_url, o.checkout_expires_at AS checkout_expires_at, o.cancelled_at AS cancelled_at
            FROM orders o LEFT JOIN promo_codes c ON c.id = o.discount_code_id
            WHERE \(condition)
            """, values).rows.map { row in
            func optionalDate(_ name: String) throws -> Date? {
                try row.optionalString(name).map { try UTCCivilTime.storedDate($0, column: "orders.\(name)") }
            }
            let storedStatus = try row.string("status")
            guard var status = Order.Status(rawValue: storedStatus), status != .cancelled else {
                throw StoreError.unreadable("orders.status holds unknown '\(storedStatus)'")
            }
            let cancelledAt = try optionalDate("cancelled_at")
            if status == .pending, cancelledAt != nil { status = .cancelled }
            let checkout: Order.Checkout?
            if let sessionID = try row.optionalString("checkout_session_id"), let url = try row.optionalString("checkout_url") {
                checkout = Order.Checkout(sessionID: sessionID, url: url, expiresAt: try optionalDate("checkout_expires_at"))
            } else {
                checkout = nil
            }
            return Order(publicID: try row.string("public_id"), playerID: try row.int64("player_id"),
                         amount: Money(minorUnits: try row.int64("amount_minor"), currency: try row.string("currency")),
                         discountCode: try row.optionalString("discount_code"), status: status,
                         createdAt: try UTCCivilTime.storedDate(row.string("created_at"), column: "orders.created_at"),
                         paidAt: try optionalDate("paid_at"), providerEventID: try row.optionalString("provider_event_id"),
                         checkout: checkout, cancelledAt: cancelledAt)
        }
    }
}
