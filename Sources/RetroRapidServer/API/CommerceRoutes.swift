import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// Unlimited play (docs/API.md, "Unlimited play"): the price due, redeeming a code,
/// orders, and the payment provider's webhook, the only way (besides the operator's CLI) an
/// order becomes paid. No card data reaches this server.
enum CommerceRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/price") { request, responder in price(request, responder, api) }
        router.add(.post, "/api/v1/codes/redeem") { request, responder in redeem(request, responder, api) }
        router.add(.post, "/api/v1/orders") { request, responder in createOrder(request, responder, api) }
        router.add(.get, "/api/v1/orders") { request, responder in orders(request, responder, api) }
        router.add(.get, "/api/v1/orders/{id}") { request, responder in order(request, responder, api) }
        router.add(.post, "/api/v1/orders/{id}/cancel") { request, responder in cancel(request, responder, api) }
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
        /// Whether this server sells unlimited play (a payment provider is configured); when
        /// false, only a code from whoever runs it unlocks.
        var purchasable: Bool

        init(_ price: PriceDue, purchasable: Bool) {
            amount = MoneyJSON(price.amount)
            base = MoneyJSON(price.base)
            discountCode = price.discountCode
            discountExpiresAt = price.discountExpiresAt
            self.purchasable = purchasable
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
        /// `pending` until the payment provider's webhook (or the operator) marks it `paid`;
        /// `cancelled` when the player cancelled it unpaid.
        var status: String
        var amount: MoneyJSON
        var discountCode: String?
        var createdAt: Date
        var paidAt: Date?
        var cancelledAt: Date?
        /// The provider's page to pay on, while it still takes payment (pending, not expired).
        var checkoutUrl: String?
        var checkoutExpiresAt: Date?

        init(_ order: Order, now: Date) {
            id = order.publicID
            status = order.status.rawValue
            amount = MoneyJSON(order.amount)
            discountCode = order.discountCode
            createdAt = order.createdAt
            paidAt = order.paidAt
            cancelledAt = order.cancelledAt
            if order.checkoutIsOpen(at: now) {
                checkoutUrl = order.checkout?.url
                checkoutExpiresAt = order.checkout?.expiresAt
            }
        }
    }

    struct OrderListJSON: Encodable {
        /// Newest first.
        var orders: [OrderJSON]
    }

    struct WebhookJSON: Encodable {
        /// `paid`, `already_handled`, `ignored` or `refused`.
        var outcome: String
        var eventId: String
        var order: String?
        /// Why a `refused` session paid nothing.
        var reason: String?
    }

    // MARK: - Handlers

    /// GET /api/v1/price: what unlimited play costs this player now.
    static func price(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let purchasable = api.checkout != nil
        api.runSignedIn(request, responder) { storage, device, now in
            try APIJSON.response(PriceJSON(storage.orders.priceDue(playerID: device.player.id, now: now), purchasable: purchasable))
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
        let purchasable = api.checkout != nil
        api.runSignedIn(request, responder, body: RedeemBody.self) { storage, device, now, body in
            let keys: [(RateLimits.Scope, String)] = [(.player, String(device.player.id)), (.address, address)]
            let redemption = try rateLimits.guarded(.codeRedeem, keys, counts: RateLimits.isFailedCodeGuess,
                                                    in: storage.rateLimits, now: now) {
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
                price: PriceJSON(try storage.orders.priceDue(playerID: device.player.id, now: now), purchasable: purchasable)))
        }
    }

    /// What the storage thread decided for a purchase.
    enum PurchaseStep: Sendable {
        /// Answer this (the player's pending order whose checkout is still open).
        case answer(HTTPResponse)
        /// Open a checkout session for a new order, then store it.
        case open(playerID: Int64, orderID: String, price: PriceDue)
    }

    static let paymentsUnavailable = APIError(
        status: 503, code: "payments_unavailable",
        message: "This server sells nothing: no payment provider is configured. Ask whoever runs it for a code.")

    /// POST /api/v1/orders: buy unlimited play through the provider's hosted checkout.
    ///
    /// On the storage thread: the player's pending order whose checkout page is still open is
    /// answered as it is (200: a double click, a reload). Otherwise the provider is asked to open
    /// a checkout session (`CheckoutClient`, on URLSession's threads, bounded by
    /// `--payment-timeout-seconds`), and only once it has, the order is stored with the session
    /// (201, `checkoutUrl`: send the browser there). A provider that refuses or does not answer
    /// is a 502 and stores nothing. 409 with unlimited play already; 503 `payments_unavailable`
    /// when no provider is configured.
    static func createOrder(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        do {
            _ = try APIServices.bearerToken(request)
            _ = try APIJSON.decode(PlayerRoutes.EmptyBody.self, from: request, required: false)
        } catch {
            return responder.respond(error.response)
        }
        let checkout = api.checkout, worker = api.worker, logger = api.logger
        let openings = api.checkoutOpenings, rateLimits = api.rateLimits
        api.performSignedIn(request, responder, { storage, device, now -> PurchaseStep in
            // After signing in, so a request without a usable token is 401 (or 429) as everywhere.
            guard checkout != nil else { throw paymentsUnavailable }
            switch try storage.orders.checkoutPlan(playerID: device.player.id, now: now) {
            case .existing(let order): return .answer(try APIJSON.response(OrderJSON(order, now: now)))
            case .new(let orderID, let price): return .open(playerID: device.player.id, orderID: orderID, price: price)
            }
        }, then: { step in
            switch step {
            case .answer(let response):
                responder.respond(response)
            case .open(let playerID, let orderID, let price):
                guard let checkout else { return responder.respond(paymentsUnavailable.response) }
                // One session at a time per player; a purchase meanwhile gets the same order.
                guard openings.begin(playerID: playerID, responder: responder) else { return }
                do {
                    try rateLimits.take(.checkoutOpen, .player, key: String(playerID))
                } catch {
                    let refusal = APIError(error).response
                    responder.respond(refusal)
                    return openings.finish(playerID: playerID, answeringWaitersWith: refusal)
                }
                openCheckout(checkout, playerID: playerID, orderID: orderID, price: price,
                             responder: responder, worker: worker, logger: logger, openings: openings)
            }
        })
    }

    /// Asks the provider for a checkout session, then stores the order with it and answers 201
    /// (200 with the order another purchase stored first, the new session closed). Every
    /// purchase that waited for this one (`CheckoutOpenings`) gets the same order, as 200, or
    /// the same error. Runs on the service thread; the call's completion runs on one of
    /// URLSession's threads and goes back to storage through the `DatabaseWorker`.
    static func openCheckout(_ checkout: CheckoutClient, playerID: Int64, orderID: String, price: PriceDue,
                             responder: HTTPResponder, worker: DatabaseWorker, logger: Logger, openings: CheckoutOpenings) {
        checkout.createSession(orderID: orderID, amount: price.amount) { result in
            // On one of URLSession's threads: never touch storage here.
            switch result {
            case .failure(let error):
                logger.warning("payment provider refused a checkout", metadata: ["order": orderID, "error": error.message])
                let answer = error.apiError.response
                responder.respond(answer)
                openings.finish(playerID: playerID, answeringWaitersWith: answer)
            case .success(let session):
                worker.perform({ storage -> (HTTPResponse, HTTPResponse, closeSession: Bool) in
                    let now = storage.now
                    switch try storage.orders.createOrder(
                        publicID: orderID, playerID: playerID, amount: price.amount, discountCode: price.discountCode,
                        checkout: session, now: now) {
                    case .created(let order):
                        let json = OrderJSON(order, now: now)
                        return (try APIJSON.response(json, status: 201), try APIJSON.response(json), false)
                    case .existing(let order):
                        let answer = try APIJSON.response(OrderJSON(order, now: now))
                        return (answer, answer, true)
                    }
                }, then: { result in
                    let closeSession: Bool
                    switch result {
                    case .success(let (answer, waitersAnswer, close)):
                        responder.respond(answer)
                        openings.finish(playerID: playerID, answeringWaitersWith: waitersAnswer)
                        closeSession = close
                    case .failure(let error):
                        let answer = APIError(error, logger: logger).response
                        responder.respond(answer)
                        openings.finish(playerID: playerID, answeringWaitersWith: answer)
                        closeSession = true
                    }
                    // Not stored (the player got unlimited play meanwhile, or another purchase
                    // stored its order first): close the page so nobody pays for an order this
                    // server does not know.
                    if closeSession { checkout.expireSession(session.sessionID) { _ in } }
                })
            }
        }
    }

    /// GET /api/v1/orders: the player's orders, newest first, each pending one with the page
    /// to pay on while it is open.
    static func orders(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder) { storage, device, now in
            try APIJSON.response(OrderListJSON(orders: storage.orders.orders(playerID: device.player.id).map { OrderJSON($0, now: now) }))
        }
    }

    /// GET /api/v1/orders/{id}: one of the player's orders; another player's is "not found".
    static func order(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let id = request.pathParameters["id"] ?? ""
        api.runSignedIn(request, responder) { storage, device, now in
            try APIJSON.response(OrderJSON(storage.orders.order(publicID: id, playerID: device.player.id), now: now))
        }
    }

    /// POST /api/v1/orders/{id}/cancel: the player gives up an unpaid order; its checkout is no
    /// longer offered. 409 for a paid order. The answer comes once stored; then the provider is
    /// asked to close the session's page (`CheckoutClient.expireSession`, off the service
    /// thread; a failure is only logged). A payment that arrives anyway pays the order (see
    /// `webhook`).
    static func cancel(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let id = request.pathParameters["id"] ?? ""
        let checkout = api.checkout, logger = api.logger
        do {
            _ = try APIServices.bearerToken(request)
            _ = try APIJSON.decode(PlayerRoutes.EmptyBody.self, from: request, required: false)
        } catch {
            return responder.respond(error.response)
        }
        api.performSignedIn(request, responder, { storage, device, now -> (HTTPResponse, String?) in
            let before = try storage.orders.order(publicID: id, playerID: device.player.id)
            let order = try storage.orders.cancel(publicID: id, playerID: device.player.id, now: now)
            // Only the first cancel closes the page; a repeat has nothing to close.
            let toExpire = before.status == .pending ? order.checkout?.sessionID : nil
            return (try APIJSON.response(OrderJSON(order, now: now)), toExpire)
        }, then: { answer, sessionID in
            responder.respond(answer)
            guard let sessionID, let checkout else { return }
            checkout.expireSession(sessionID) { error in
                if let error {
                    logger.warning("the provider did not close a cancelled order's checkout; a payment there still pays it",
                                   metadata: ["order": id, "error": error.message])
                }
            }
        })
    }

    /// POST /api/v1/payments/webhook: the provider says, signed with the shared secret
    /// (Stripe's `Stripe-Signature`, or the older `Payment-Signature`: HMAC-SHA256 over
    /// "t.body"), that a checkout was paid. The raw bytes go to `PaymentWebhook` untouched: the
    /// signature is over exactly them. A payment for a cancelled order pays it (the money was
    /// taken) and is logged as a warning for the operator. A session that is not the order's
    /// own (`PaymentClaim`) pays nothing and is answered 200 `refused`, not a 4xx: the
    /// provider would retry the same event for days, never with another outcome, and may
    /// disable an endpoint that keeps failing, real payments with it (docs/API.md, "The
    /// payment webhook").
    static func webhook(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let body = request.body
        let signature = request[header: PaymentWebhook.signatureHeaderName] ?? request[header: PaymentWebhook.legacySignatureHeaderName]
        let logger = api.logger
        api.run(responder) { storage, now in
            let outcome: WebhookJSON
            switch try storage.webhook.handle(body: body, signatureHeader: signature, now: now) {
            case .paid(let order):
                if order.cancelledAt != nil {
                    logger.warning("payment arrived for a cancelled order; paid and unlimited play granted, refund it if the player asks",
                                   metadata: ["order": order.publicID, "event": order.providerEventID ?? ""])
                }
                outcome = WebhookJSON(outcome: "paid", eventId: order.providerEventID ?? "", order: order.publicID)
            case .alreadyHandled(let eventID): outcome = WebhookJSON(outcome: "already_handled", eventId: eventID)
            case .ignored(let eventID, _): outcome = WebhookJSON(outcome: "ignored", eventId: eventID)
            case .refused(let eventID, let orderID, let reason):
                logger.warning("payment webhook refused: the session is not the order's; nothing paid",
                               metadata: ["order": orderID, "event": eventID, "reason": reason])
                outcome = WebhookJSON(outcome: "refused", eventId: eventID, order: orderID, reason: reason)
            }
            return try APIJSON.response(outcome)
        }
    }
}
