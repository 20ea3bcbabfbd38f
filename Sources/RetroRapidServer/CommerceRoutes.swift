import Foundation
import RetroRapidStorage

/// Unlimited play (docs/API.md, "Unlimited play"): the price due, redeeming a code,
/// orders, and the payment provider's webhook, the only way (besides the operator's CLI) an
/// order becomes paid. No card data reaches this server.
enum CommerceRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/price") { request, responder in price(request, responder, api) }
        router.add(.post, "/api/v1/codes/redeem") { request, responder in redeem(request, responder, api) }
        router.add(.post, "/api/v1/orders") { request, responder in createOrder(request, responder, api) }
        router.add(.get, "/api/v1/orders/{id}") { request, responder in order(request, responder, api) }
        router.add(.post, "/api/v1/payments/webhook") { request, responder in webhook(request, responder, api) }
    }

    // MARK: - Bodies and answers

    struct RedeemBody: APIRequestBody {
        static let fields = ["code"]
        var code: String
    }

    struct MoneyJSON: Encodable {
        /// Pence, cents: never a floating-point amount.
        var minorUnits: Int64
        var currency: String
        /// For people: "£0.99".
        var display: String

        init(_ money: Money) {
            minorUnits = money.minorUnits
            currency = money.currency
            display = money.description
        }
    }

    struct PriceJSON: Encodable {
        var amount: MoneyJSON
        var base: MoneyJSON
        var discountCode: String?
        var discountExpiresAt: Date?

        init(_ price: PriceDue) {
            amount = MoneyJSON(price.amount)
            base = MoneyJSON(price.base)
            discountCode = price.discountCode
            discountExpiresAt = price.discountExpiresAt
        }
    }

    struct RedemptionJSON: Encodable {
        var code: String
        /// `discount` or `unlock`.
        var kind: String
        var redeemedAt: Date
        var expiresAt: Date?
        /// The player has unlimited play now.
        var unlimited: Bool
        /// The price of unlimited play for this player now (lowered by a discount code).
        var price: PriceJSON
    }

    struct OrderJSON: Encodable {
        var id: String
        /// `pending` until the payment provider's webhook (or the operator) marks it `paid`.
        var status: String
        var amount: MoneyJSON
        var discountCode: String?
        var createdAt: Date
        var paidAt: Date?

        init(_ order: Order) {
            id = order.publicID
            status = order.status.rawValue
            amount = MoneyJSON(order.amount)
            discountCode = order.discountCode
            createdAt = order.createdAt
            paidAt = order.paidAt
        }
    }

    struct WebhookJSON: Encodable {
        /// `paid`, `already_handled` or `ignored`.
        var outcome: String
        var eventId: String
        var order: String?
    }

    // MARK: - Handlers

    /// GET /api/v1/price: what unlimited play costs this player now.
    static func price(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder) { storage, device, now in
            try APIJSON.response(PriceJSON(storage.orders.priceDue(playerID: device.player.id, now: now)))
        }
    }

    /// POST /api/v1/codes/redeem: a discount code lowers the price, an unlock code grants
    /// unlimited play. Redeeming the same code again answers the first redemption. Codes that
    /// redeem nothing are limited per player and per client address (`RateLimits`); a code
    /// that works costs nothing.
    static func redeem(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let address = api.addressKey(request)
        if (try? APIServices.bearerToken(request)) != nil,
           let refusal = api.rateLimits.refusal(.codeRedeem, .address, key: address) {
            return responder.respond(APIError(refusal).response)  // before any database job
        }
        let rateLimits = api.rateLimits
        api.runSignedIn(request, responder, body: RedeemBody.self) { storage, device, now, body in
            let keys: [(RateLimits.Scope, String)] = [(.player, String(device.player.id)), (.address, address)]
            let redemption = try rateLimits.guarded(.codeRedeem, keys, counts: RateLimits.isFailedCodeGuess) {
                try storage.codes.redeem(code: body.code, playerID: device.player.id, now: now)
            }
            let kind: String
            switch redemption.kind {
            case .discount: kind = "discount"
            case .unlock: kind = "unlock"
            }
            return try APIJSON.response(RedemptionJSON(
                code: redemption.code, kind: kind, redeemedAt: redemption.redeemedAt, expiresAt: redemption.expiresAt,
                unlimited: try storage.entitlements.hasUnlimited(playerID: device.player.id),
                price: PriceJSON(try storage.orders.priceDue(playerID: device.player.id, now: now))))
        }
    }

    /// POST /api/v1/orders: an order for unlimited play at the price due now (the same pending
    /// order again on a repeat). 409 when the player already has unlimited play.
    static func createOrder(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder, body: PlayerRoutes.EmptyBody.self, required: false) { storage, device, now, _ in
            try APIJSON.response(OrderJSON(storage.orders.createOrder(playerID: device.player.id, now: now)), status: 201)
        }
    }

    /// GET /api/v1/orders/{id}: one of the player's orders; another player's is "not found".
    static func order(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let id = request.pathParameters["id"] ?? ""
        api.runSignedIn(request, responder) { storage, device, _ in
            try APIJSON.response(OrderJSON(storage.orders.order(publicID: id, playerID: device.player.id)))
        }
    }

    /// POST /api/v1/payments/webhook: the provider says, signed with the shared secret
    /// (header `Payment-Signature`, HMAC-SHA256 over the raw body), that an order was paid.
    /// The raw bytes go to `PaymentWebhook` untouched: the signature is over exactly them.
    static func webhook(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let body = request.body
        let signature = request[header: PaymentWebhook.signatureHeaderName]
        api.run(responder) { storage, now in
            let outcome: WebhookJSON
            switch try storage.webhook.handle(body: body, signatureHeader: signature, now: now) {
            case .paid(let order): outcome = WebhookJSON(outcome: "paid", eventId: order.providerEventID ?? "", order: order.publicID)
            case .alreadyHandled(let eventID): outcome = WebhookJSON(outcome: "already_handled", eventId: eventID)
            case .ignored(let eventID, _): outcome = WebhookJSON(outcome: "ignored", eventId: eventID)
            }
            return try APIJSON.response(outcome)
        }
    }
}
