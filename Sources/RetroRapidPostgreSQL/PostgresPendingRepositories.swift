import Foundation
import RetroRapidDomain
import RetroRapidRules

// Being ported from RetroRapidSQLite on other branches; each struct here is deleted when its
// real file lands. Never merged to main.
struct PostgresPlayerRepository: PlayerRepository {
    let connection: PostgresConnection
    func createPlayer(displayName: String?, deviceLabel: String, now: Date) throws -> (player: Player, token: String) { preconditionFailure("pending") }
    func authenticate(token: String, now: Date) throws -> AuthenticatedDevice { preconditionFailure("pending") }
    func player(publicID: String) throws -> Player { preconditionFailure("pending") }
    func player(id: Int64) throws -> Player { preconditionFailure("pending") }
    func setDisplayName(playerID: Int64, name: String) throws -> Player { preconditionFailure("pending") }
    func devices(playerID: Int64, currentDeviceID: Int64?) throws -> [Device] { preconditionFailure("pending") }
    func revokeDevice(playerID: Int64, deviceID: Int64, now: Date, allowingLastDevice: Bool) throws { preconditionFailure("pending") }
}
struct PostgresLinkCodeRepository: LinkCodeRepository {
    let connection: PostgresConnection
    let policy: LinkCodePolicy
    func createCode(for device: AuthenticatedDevice, now: Date) throws -> IssuedLinkCode { preconditionFailure("pending") }
    func retryAfter(playerID: Int64, now: Date) throws -> TimeInterval? { preconditionFailure("pending") }
    func claim(code: String, deviceLabel: String, now: Date) throws -> (player: Player, token: String) { preconditionFailure("pending") }
}
struct PostgresCodeRepository: CodeRepository {
    let connection: PostgresConnection
    func create(code: String, kind: PromoCode.Kind, startsAt: Date?, expiresAt: Date?, maxRedemptions: Int?, now: Date) throws -> PromoCode { preconditionFailure("pending") }
    func list() throws -> [PromoCode] { preconditionFailure("pending") }
    func code(_ code: String) throws -> PromoCode { preconditionFailure("pending") }
    func disable(code: String, now: Date) throws -> PromoCode { preconditionFailure("pending") }
    func redeem(code: String, playerID: Int64, now: Date) throws -> Redemption { preconditionFailure("pending") }
    func redemptions(playerID: Int64) throws -> [Redemption] { preconditionFailure("pending") }
}
struct PostgresOrderRepository: OrderRepository {
    let connection: PostgresConnection
    let basePrice: Money
    func priceDue(playerID: Int64, now: Date) throws -> PriceDue { preconditionFailure("pending") }
    func createOrder(playerID: Int64, now: Date) throws -> Order { preconditionFailure("pending") }
    func checkoutPlan(playerID: Int64, now: Date) throws -> CheckoutPlan { preconditionFailure("pending") }
    func createOrder(publicID: String, playerID: Int64, amount: Money, discountCode: String?, checkout: Order.Checkout, now: Date) throws -> StoredCheckout { preconditionFailure("pending") }
    func cancel(publicID: String, playerID: Int64, now: Date) throws -> Order { preconditionFailure("pending") }
    func order(publicID: String, playerID: Int64) throws -> Order { preconditionFailure("pending") }
    func order(publicID: String) throws -> Order { preconditionFailure("pending") }
    func orders(playerID: Int64) throws -> [Order] { preconditionFailure("pending") }
    func markPaid(orderID: String, providerEventID: String, now: Date) throws -> Order { preconditionFailure("pending") }
}
struct PostgresPaymentEventRepository: PaymentEventRepository {
    let connection: PostgresConnection
    func record(eventID: String, type: String, paying orderID: String?, now: Date) throws -> PaymentWebhook.Outcome { preconditionFailure("pending") }
}
struct PostgresSettingsRepository: SettingsRepository {
    let connection: PostgresConnection
    func settings(playerID: Int64) throws -> VersionedSettings { preconditionFailure("pending") }
    func write(playerID: Int64, document: PlayerSettings, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult { preconditionFailure("pending") }
    func write(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult { preconditionFailure("pending") }
    func patch(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult { preconditionFailure("pending") }
}
