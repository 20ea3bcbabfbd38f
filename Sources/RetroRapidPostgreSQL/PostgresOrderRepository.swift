import Foundation
import RetroRapidDomain
import RetroRapidSQL

/// Orders for unlimited play on PostgreSQL (docs/API.md, "Unlimited play"). An order records
/// the price due when it is made (``PriceDue/best(base:redeemed:now:)``); it becomes paid
/// only through ``markPaid(orderID:providerEventID:now:)``, which grants unlimited play in
/// the same transaction (`SQLEntitlementRepository`).
///
/// How each rule stays exact with many nodes writing at once (READ COMMITTED):
/// * "one open order at a price" (both `createOrder` forms): the player's row is locked first
///   (`SELECT … FOR UPDATE`), then the open order is looked for and the new one inserted in
///   that transaction, so of concurrent purchases by one player the first stores its order
///   and the others get it back;
/// * paying locks the player's row too, then the order's (`FOR UPDATE`): two payments of
///   one order are serialised (the second finds it paid and changes nothing), a payment and a
///   cancel cannot cross, and a payment cannot interleave with the player redeeming an unlock
///   code (`SQLCodeRepository` takes the same lock), so "already has unlimited play" is
///   read true. The order's update and the entitlement commit together.
public struct PostgresOrderRepository: OrderRepository {
    public let connection: PostgresConnection
    public let basePrice: Money

    /// - Parameter basePrice: a positive amount in a three-letter uppercase currency
    ///   (`ServerConfiguration` validates the configured one before it gets here).
    public init(connection: PostgresConnection, basePrice: Money = .defaultUnlimitedPrice) {
        precondition((try? basePrice.validatedPrice(field: "basePrice")) == basePrice,
                     "the base price must be positive with an uppercase three-letter currency, not \(basePrice)")
        self.connection = connection
        self.basePrice = basePrice
    }

    public func priceDue(playerID: Int64, now: Date) throws -> PriceDue {
        try connection.transaction(.repeatableRead) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: db)
            return try priceDue(playerID: playerID, now: now, in: db)
        }
    }

    public func createOrder(playerID: Int64, now: Date) throws -> Order {
        try connection.transaction { db in
            try requireBuyer(playerID, in: db)
            let price = try priceDue(playerID: playerID, now: now, in: db)
            if let order = try Self.orders(
                where: "o.player_id = $1 AND o.status = 'pending' AND o.amount_minor = $2 AND o.currency = $3 ORDER BY o.id DESC LIMIT 1",
                [playerID, price.amount.minorUnits, price.amount.currency], in: db).first {
                return order
            }
            let publicID = Order.newPublicID()
            try db.execute("""
                INSERT INTO orders (public_id, player_id, amount_minor, currency, discount_code_id, status, created_at)
                VALUES ($1, $2, $3, $4, (SELECT id FROM promo_codes WHERE code = $5), 'pending', $6)
                """, [publicID, playerID, price.amount.minorUnits, price.amount.currency, price.discountCode, UTCCivilTime.text(now)])
            return try Self.order(publicID: publicID, in: db)
        }
    }

    /// Stores nothing: the order is made once the provider opened its session.
    public func checkoutPlan(playerID: Int64, now: Date) throws -> CheckoutPlan {
        try connection.transaction(.repeatableRead) { db in
            try SQLPlayerLookup.requirePlayer(playerID, in: db)
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: db) != nil { throw Order.nothingToBuy }
            let price = try priceDue(playerID: playerID, now: now, in: db)
            if let order = try Self.openOrder(playerID: playerID, amount: price.amount, now: now, in: db) { return .existing(order) }
            return .new(publicID: Order.newPublicID(), price: price)
        }
    }

    public func createOrder(publicID: String, playerID: Int64, amount: Money, discountCode: String?,
                            checkout: Order.Checkout, now: Date) throws -> StoredCheckout {
        try connection.transaction { db in
            try requireBuyer(playerID, in: db)
            if let open = try Self.openOrder(playerID: playerID, amount: amount, now: now, in: db) { return .existing(open) }
            try db.execute("""
                INSERT INTO orders (public_id, player_id, amount_minor, currency, discount_code_id, status, created_at,
                                    checkout_session_id, checkout_url, checkout_expires_at)
                VALUES ($1, $2, $3, $4, (SELECT id FROM promo_codes WHERE code = $5), 'pending', $6, $7, $8, $9)
                """, [publicID, playerID, amount.minorUnits, amount.currency, discountCode, UTCCivilTime.text(now),
                      checkout.sessionID, checkout.url, checkout.expiresAt.map(UTCCivilTime.text)])
            return .created(try Self.order(publicID: publicID, in: db))
        }
    }

    public func cancel(publicID: String, playerID: Int64, now: Date) throws -> Order {
        try connection.transaction { db in
            // The order's row locked: a payment arriving now waits, and then pays it cancelled.
            guard let order = try Self.orders(where: "o.public_id = $1 AND o.player_id = $2 FOR UPDATE OF o",
                                              [publicID, playerID], in: db).first
            else { throw Order.unknown(publicID) }
            switch order.status {
            case .paid:
                throw Order.paidCannotBeCancelled(publicID)
            case .cancelled:
                return order
            case .pending:
                try db.execute("UPDATE orders SET cancelled_at = $1 WHERE public_id = $2 AND status = 'pending' AND cancelled_at IS NULL",
                               [UTCCivilTime.text(now), publicID])
                return try Self.order(publicID: publicID, in: db)
            }
        }
    }

    public func order(publicID: String, playerID: Int64) throws -> Order {
        guard let order = try Self.orders(where: "o.public_id = $1 AND o.player_id = $2", [publicID, playerID], in: connection).first
        else { throw Order.unknown(publicID) }
        return order
    }

    public func order(publicID: String) throws -> Order {
        try Self.order(publicID: publicID, in: connection)
    }

    public func orders(playerID: Int64) throws -> [Order] {
        try Self.orders(where: "o.player_id = $1 ORDER BY o.id DESC", [playerID], in: connection)
    }

    @discardableResult
    public func markPaid(orderID: String, providerEventID: String, now: Date) throws -> Order {
        let providerEventID = try Order.validatedProviderEventID(providerEventID)
        return try connection.transaction { db in
            try Self.markPaid(orderID: orderID, providerEventID: providerEventID, now: now, in: db)
        }
    }

    // MARK: - Inside a transaction

    /// The player exists and has nothing bought yet, with their row locked until commit.
    private func requireBuyer(_ playerID: Int64, in db: PostgresConnection) throws {
        try SQLPlayerLookup.requirePlayer(playerID, in: db, lockingRow: true)
        if try SQLEntitlementRepository.unlimited(playerID: playerID, in: db) != nil { throw Order.nothingToBuy }
    }

    func priceDue(playerID: Int64, now: Date, in db: PostgresConnection) throws -> PriceDue {
        PriceDue.best(base: basePrice, redeemed: try SQLCodeRepository.redeemedCodes(playerID: playerID, in: db).map(\.code), now: now)
    }

    /// Pays the order unless it is paid; used by ``PostgresPaymentEventRepository`` too.
    static func markPaid(orderID: String, providerEventID: String, now: Date, in db: PostgresConnection) throws -> Order {
        let order = try order(publicID: orderID, in: db)
        guard order.status != .paid else { return order }
        // The player's row, then the order's, in the order every writer takes them.
        try SQLPlayerLookup.requirePlayer(order.playerID, in: db, lockingRow: true)
        guard let locked = try orders(where: "o.public_id = $1 FOR UPDATE OF o", [orderID], in: db).first else {
            throw Order.unknown(orderID)
        }
        guard locked.status != .paid else { return locked }
        try db.execute("UPDATE orders SET status = 'paid', paid_at = $1, provider_event_id = $2 WHERE public_id = $3 AND status = 'pending'",
                       [UTCCivilTime.text(now), providerEventID, orderID])
        _ = try SQLEntitlementRepository.grant(playerID: order.playerID, source: .order, reference: orderID, now: now, in: db)
        return try Self.order(publicID: orderID, in: db)
    }

    /// The player's newest pending order at `amount` whose checkout page is still open.
    static func openOrder(playerID: Int64, amount: Money, now: Date, in db: PostgresConnection) throws -> Order? {
        try orders(
            where: "o.player_id = $1 AND o.status = 'pending' AND o.cancelled_at IS NULL AND o.checkout_url IS NOT NULL AND o.amount_minor = $2 AND o.currency = $3 ORDER BY o.id DESC",
            [playerID, amount.minorUnits, amount.currency], in: db
        ).first(where: { $0.checkoutIsOpen(at: now) })
    }

    static func order(publicID: String, in db: PostgresConnection) throws -> Order {
        guard let order = try orders(where: "o.public_id = $1", [publicID], in: db).first else { throw Order.unknown(publicID) }
        return order
    }

    /// The numeric id of the order with this public id (what `webhook_events.order_id` holds).
    static func rowID(publicID: String, in db: PostgresConnection) throws -> Int64? {
        try db.execute("SELECT id FROM orders WHERE public_id = $1", [publicID]).first?.int64(at: 0)
    }

    private static func orders(where condition: String, _ values: [any PostgresBindable], in db: PostgresConnection) throws -> [Order] {
        try db.execute("""
            SELECT o.public_id, o.player_id, o.amount_minor, o.currency, c.code, o.status, o.created_at, o.paid_at, o.provider_event_id,
                   o.checkout_session_id, o.checkout_url, o.checkout_expires_at, o.cancelled_at
            FROM orders o LEFT JOIN promo_codes c ON c.id = o.discount_code_id
            WHERE \(condition)
            """, values).map { row in
            func optionalDate(_ column: Int, _ name: String) throws -> Date? {
                try row.optionalString(at: column).map { try UTCCivilTime.storedDate($0, column: "orders.\(name)") }
            }
            guard var status = Order.Status(rawValue: row.string(at: 5)), status != .cancelled else {
                throw StoreError.unreadable("orders.status holds unknown '\(row.string(at: 5))'")
            }
            let cancelledAt = try optionalDate(12, "cancelled_at")
            if status == .pending, cancelledAt != nil { status = .cancelled }
            let checkout: Order.Checkout? = row.isNull(at: 9) || row.isNull(at: 10) ? nil
                : Order.Checkout(sessionID: row.string(at: 9), url: row.string(at: 10), expiresAt: try optionalDate(11, "checkout_expires_at"))
            return Order(publicID: row.string(at: 0), playerID: row.int64(at: 1),
                         amount: Money(minorUnits: row.int64(at: 2), currency: row.string(at: 3)),
                         discountCode: row.optionalString(at: 4), status: status,
                         createdAt: try UTCCivilTime.storedDate(row.string(at: 6), column: "orders.created_at"),
                         paidAt: try optionalDate(7, "paid_at"), providerEventID: row.optionalString(at: 8),
                         checkout: checkout, cancelledAt: cancelledAt)
        }
    }
}
