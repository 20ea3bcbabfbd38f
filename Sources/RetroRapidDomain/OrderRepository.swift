import Foundation

/// Orders for unlimited play (docs/API.md, "Unlimited play"). An order records the price due
/// when it is made; it becomes paid only through the payment provider's verified webhook
/// (``PaymentWebhook``) or the operator's CLI, both through ``markPaid(orderID:providerEventID:now:)``,
/// which grants unlimited play in the same write.
public protocol OrderRepository {
    /// The price before discounts.
    var basePrice: Money { get }

    func priceDue(playerID: Int64, now: Date) throws -> PriceDue

    func createOrder(playerID: Int64, now: Date) throws -> Order

    func checkoutPlan(playerID: Int64, now: Date) throws -> CheckoutPlan

    /// Stores the order with the session the provider opened, unless another purchase by the
    /// player stored an open one at this price first (then `.existing`, atomically).
    func createOrder(publicID: String, playerID: Int64, amount: Money, discountCode: String?,
                     checkout: Order.Checkout, now: Date) throws -> StoredCheckout

    func cancel(publicID: String, playerID: Int64, now: Date) throws -> Order

    /// One of the player's orders. - Throws: `StoreError(.notFound)`, also for another's order.
    func order(publicID: String, playerID: Int64) throws -> Order

    func order(publicID: String) throws -> Order

    func orders(playerID: Int64) throws -> [Order]

    /// The latest orders of every player, newest first, at most `limit` (1 to 500): all of
    /// them, or only those in `status` (a cancelled order is `.cancelled` here, not pending).
    /// - Throws: `StoreError(.invalid)` for a limit out of range.
    func latest(status: Order.Status?, limit: Int) throws -> [Order]

    /// Paying is idempotent: an order already paid is returned as it is.
    @discardableResult
    func markPaid(orderID: String, providerEventID: String, now: Date) throws -> Order
}
