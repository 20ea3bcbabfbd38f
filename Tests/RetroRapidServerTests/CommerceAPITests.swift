import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import Testing
@testable import RetroRapidServer

@Suite("Codes, orders and the payment webhook over HTTP")
struct CommerceAPITests {
    /// The launch offer as the operator creates it: £0.99 while it lasts (its real end date has
    /// passed on this machine's clock, so this one ends a year from now).
    static func createLaunchOffer(_ server: RunningGameServer) throws {
        try SQLCodeRepository(executor: SQLiteExecutor(database: server.database())).create(
            code: "ARCTICCONF", kind: .discount(Money(minorUnits: 99, currency: "GBP")),
            expiresAt: Date().addingTimeInterval(365 * 86_400), now: Date())
    }

    /// A server that sells, against an in-process stand-in for the provider's
    /// POST /v1/checkout/sessions (the full stand-in, with its page and webhook, is
    /// Tests/python/payment_provider_standin.py).
    static func sellingServer() throws -> (server: RunningGameServer, provider: RunningTestServer) {
        var router = HTTPRouter()
        router.add(.post, "/v1/checkout/sessions") { request, responder in
            guard request[header: "authorization"] == "Bearer sk_test_commerce" else {
                return responder.respond(HTTPResponse(status: 401, contentType: "application/json", body: Array(
                    #"{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}"#.utf8)))
            }
            let id = "cs_test_" + String(UInt64.random(in: 1...UInt64.max))
            responder.respond(HTTPResponse(status: 200, contentType: "application/json", body: Array(
                #"{"id":"\#(id)","object":"checkout.session","url":"https://checkout.example/c/pay/\#(id)"}"#.utf8)))
        }
        let provider = try RunningTestServer(router: router)
        let server = try RunningGameServer { options in
            options.configuration.paymentProviderURL = "http://127.0.0.1:\(provider.port)"
            options.configuration.paymentSecretKey = "sk_test_commerce"
            options.configuration.publicBaseURL = "https://game.example"
        }
        return (server, provider)
    }

    static func signedWebhook(_ server: RunningGameServer, body: String, secret: String) throws -> TestHTTPResponse {
        let signature = PaymentWebhook.signatureHeader(body: Array(body.utf8), secret: Array(secret.utf8), timestamp: Date())
        return try server.request("POST", "/api/v1/payments/webhook", json: body,
                                  headers: ["Payment-Signature": signature])
    }

    @Test func theDiscountCodeLowersTheOrderPrice() throws {
        let (server, provider) = try Self.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        try Self.createLaunchOffer(server)
        let ada = try server.createPlayer("Ada")

        let before = try server.request("GET", "/api/v1/price", token: ada.token)
        #expect(before.status == 200)
        #expect((before.json?["amount"] as? [String: Any])?["minorUnits"] as? Int == 299)

        // Codes are case- and dash-insensitive.
        let redeemed = try server.request("POST", "/api/v1/codes/redeem", token: ada.token, json: #"{"code":"arctic-conf"}"#)
        #expect(redeemed.status == 200)
        #expect(redeemed.json?["kind"] as? String == "discount")
        #expect(redeemed.json?["unlimited"] as? Bool == false)
        let price = try #require((redeemed.json?["price"] as? [String: Any])?["amount"] as? [String: Any])
        #expect(price["minorUnits"] as? Int == 99)
        #expect(price["display"] as? String == "£0.99")

        let order = try server.request("POST", "/api/v1/orders", token: ada.token)
        #expect(order.status == 201)
        #expect(order.json?["status"] as? String == "pending")
        #expect(order.json?["discountCode"] as? String == "ARCTICCONF")
        #expect((order.json?["amount"] as? [String: Any])?["minorUnits"] as? Int == 99)

        let id = try #require(order.json?["id"] as? String)
        let read = try server.request("GET", "/api/v1/orders/\(id)", token: ada.token)
        #expect(read.status == 200)
        #expect(read.json?["id"] as? String == id)

        // Another player cannot see it.
        let grace = try server.createPlayer("Grace")
        #expect(try server.request("GET", "/api/v1/orders/\(id)", token: grace.token).status == 404)
    }

    @Test func anUnlockCodeGrantsUnlimitedPlay() throws {
        let (server, provider) = try Self.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        try SQLCodeRepository(executor: SQLiteExecutor(database: server.database())).create(code: "PRESS-2026", kind: .unlock, now: Date())
        let ada = try server.createPlayer("Ada")

        let redeemed = try server.request("POST", "/api/v1/codes/redeem", token: ada.token, json: #"{"code":"press2026"}"#)
        #expect(redeemed.status == 200)
        #expect(redeemed.json?["kind"] as? String == "unlock")
        #expect(redeemed.json?["unlimited"] as? Bool == true)

        let me = try server.request("GET", "/api/v1/me", token: ada.token)
        let entitlements = try #require(me.json?["entitlements"] as? [String: Any])
        #expect(entitlements["unlimited"] as? Bool == true)
        #expect(entitlements["unlimitedSource"] as? String == "code")
        #expect((try server.request("GET", "/api/v1/quota", token: ada.token)).json?["unlimited"] as? Bool == true)

        // Nothing left to buy.
        let order = try server.request("POST", "/api/v1/orders", token: ada.token)
        #expect(order.status == 409)
        #expect(order.errorCode == "conflict")
    }

    @Test func unknownExpiredAndMalformedCodesAreRefused() throws {
        let (server, provider) = try Self.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        let codes = SQLCodeRepository(executor: SQLiteExecutor(database: try server.database()))
        try codes.create(code: "ONEONLY", kind: .unlock, maxRedemptions: 1, now: Date())
        let ada = try server.createPlayer("Ada")
        let grace = try server.createPlayer("Grace")

        #expect(try server.request("POST", "/api/v1/codes/redeem", token: ada.token, json: #"{"code":"NOSUCHCODE"}"#).status == 404)
        #expect(try server.request("POST", "/api/v1/codes/redeem", token: ada.token, json: #"{"code":"!!"}"#).status == 400)
        #expect(try server.request("POST", "/api/v1/codes/redeem", token: ada.token, json: #"{"code":"ONEONLY"}"#).status == 200)
        let used = try server.request("POST", "/api/v1/codes/redeem", token: grace.token, json: #"{"code":"ONEONLY"}"#)
        #expect(used.status == 410)
        #expect(used.errorCode == "expired")
        #expect(try server.request("GET", "/api/v1/me", token: grace.token).text.contains(#""unlimited":false"#))
    }

    @Test func aCorrectlySignedWebhookPaysTheOrderAndAWronglySignedOneChangesNothing() throws {
        let (server, provider) = try Self.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        let ada = try server.createPlayer("Ada")
        let order = try server.request("POST", "/api/v1/orders", token: ada.token)
        let orderID = try #require(order.json?["id"] as? String)
        let event = RunningGameServer.json(["id": "evt_1", "type": "order.paid", "order": orderID])

        let forged = try Self.signedWebhook(server, body: event, secret: "not-the-secret")
        #expect(forged.status == 401)
        let unsigned = try server.request("POST", "/api/v1/payments/webhook", json: event)
        #expect(unsigned.status == 401)
        #expect(try server.request("GET", "/api/v1/orders/\(orderID)", token: ada.token).json?["status"] as? String == "pending")
        #expect(try server.request("GET", "/api/v1/me", token: ada.token).text.contains(#""unlimited":false"#))
        #expect(try server.count("webhook_events") == 0)

        let paid = try Self.signedWebhook(server, body: event, secret: RunningGameServer.webhookSecret)
        #expect(paid.status == 200)
        #expect(paid.json?["outcome"] as? String == "paid")
        #expect(paid.json?["order"] as? String == orderID)
        let read = try server.request("GET", "/api/v1/orders/\(orderID)", token: ada.token)
        #expect(read.json?["status"] as? String == "paid")
        #expect(read.json?["paidAt"] is String)
        let me = try server.request("GET", "/api/v1/me", token: ada.token)
        #expect((me.json?["entitlements"] as? [String: Any])?["unlimitedSource"] as? String == "order")

        // The provider retries: harmless.
        let retried = try Self.signedWebhook(server, body: event, secret: RunningGameServer.webhookSecret)
        #expect(retried.status == 200)
        #expect(retried.json?["outcome"] as? String == "already_handled")
    }

    @Test(arguments: ["Payment-Signature", "payment-signature", "PAYMENT-SIGNATURE"])
    func theSignatureHeaderIsReadWhateverItsCase(name: String) throws {
        let (server, provider) = try Self.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        let ada = try server.createPlayer("Ada")
        let orderID = try #require(try server.request("POST", "/api/v1/orders", token: ada.token).json?["id"] as? String)
        let event = RunningGameServer.json(["id": "evt_case", "type": "order.paid", "order": orderID])
        let signature = PaymentWebhook.signatureHeader(body: Array(event.utf8), secret: Array(RunningGameServer.webhookSecret.utf8),
                                                       timestamp: Date())
        let response = try server.request("POST", "/api/v1/payments/webhook", json: event, headers: [name: signature])
        #expect(response.status == 200)
    }

    @Test func aSignedWebhookWithATamperedBodyIsRefused() throws {
        let (server, provider) = try Self.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        let ada = try server.createPlayer("Ada")
        let orderID = try #require(try server.request("POST", "/api/v1/orders", token: ada.token).json?["id"] as? String)
        let event = RunningGameServer.json(["id": "evt_2", "type": "order.paid", "order": orderID])
        let signature = PaymentWebhook.signatureHeader(body: Array(event.utf8), secret: Array(RunningGameServer.webhookSecret.utf8),
                                                       timestamp: Date())
        // Same signature, body with one more space: the signature covers the exact bytes.
        let response = try server.request("POST", "/api/v1/payments/webhook", json: event + " ",
                                          headers: ["Payment-Signature": signature])
        #expect(response.status == 401)
        #expect(try server.request("GET", "/api/v1/orders/\(orderID)", token: ada.token).json?["status"] as? String == "pending")
    }
}

@Suite("Buying through the provider's hosted checkout, in process")
struct CheckoutAPITests {
    @Test func aPurchaseAnswersTheCheckoutPageAndARepeatTheSameOrder() throws {
        let (server, provider) = try CommerceAPITests.sellingServer()
        defer { withExtendedLifetime(provider) {} }
        let ada = try server.createPlayer("Ada")
        let first = try server.request("POST", "/api/v1/orders", token: ada.token)
        #expect(first.status == 201)
        let url = try #require(first.json?["checkoutUrl"] as? String)
        #expect(url.hasPrefix("https://checkout.example/c/pay/cs_test_"))
        let again = try server.request("POST", "/api/v1/orders", token: ada.token)
        #expect(again.status == 200 && again.json?["checkoutUrl"] as? String == url)
        let id = try #require(first.json?["id"] as? String)
        let cancelled = try server.request("POST", "/api/v1/orders/\(id)/cancel", token: ada.token)
        #expect(cancelled.status == 200 && cancelled.json?["status"] as? String == "cancelled" && cancelled.json?["checkoutUrl"] == nil)
        let listed = try server.request("GET", "/api/v1/orders", token: ada.token)
        #expect((listed.json?["orders"] as? [[String: Any]])?.map { $0["status"] as? String } == ["cancelled"])
    }

    @Test func withoutAProviderAPurchaseIsRefusedAndNothingIsStored() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let refused = try server.request("POST", "/api/v1/orders", token: ada.token)
        #expect(refused.status == 503 && refused.errorCode == "payments_unavailable")
        #expect(try server.request("GET", "/api/v1/price", token: ada.token).json?["purchasable"] as? Bool == false)
        #expect(try server.database().prepare("SELECT COUNT(*) FROM orders").query([]) { $0.int64(at: 0) } == [0])
    }
}
