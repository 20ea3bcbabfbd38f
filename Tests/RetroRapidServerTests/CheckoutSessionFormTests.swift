import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import RetroRapidServer
import RetroRapidDomain
import RetroRapidSQLite
import Testing

/// The checkout-session request as Stripe's API takes it, and its answers read back.
@Suite struct CheckoutSessionFormTests {
    @Test func fieldsAreEncodedAsBrowsersAndStripesLibrariesDo() {
        #expect(CheckoutSessionForm.encodeComponent("line_items[0][price_data][currency]") == "line_items%5B0%5D%5Bprice_data%5D%5Bcurrency%5D")
        #expect(CheckoutSessionForm.encodeComponent("RetroRapid unlimited play") == "RetroRapid+unlimited+play")
        #expect(CheckoutSessionForm.encodeComponent("https://g.example/unlock.html?order=ord_a&checkout=success")
            == "https%3A%2F%2Fg.example%2Funlock.html%3Forder%3Dord_a%26checkout%3Dsuccess")
        #expect(CheckoutSessionForm.encodeComponent("ñ*-._~+") == "%C3%B1*-._%7E%2B")
        #expect(CheckoutSessionForm.encode([("a", "1"), ("b c", "d&e")]) == "a=1&b+c=d%26e")
    }

    @Test func theSessionNamesTheOrderThePriceAndTheWayBack() {
        let fields = CheckoutSessionForm.fields(orderID: "ord_abc", amount: Money(minorUnits: 299, currency: "GBP"),
                                                publicBaseURL: "https://game.example.com")
        let byName = Dictionary(uniqueKeysWithValues: fields)
        #expect(fields.count == byName.count)
        #expect(byName["mode"] == "payment")
        #expect(byName["line_items[0][price_data][currency]"] == "gbp")
        #expect(byName["line_items[0][price_data][unit_amount]"] == "299")
        #expect(byName["line_items[0][quantity]"] == "1")
        #expect(byName["client_reference_id"] == "ord_abc" && byName["metadata[order]"] == "ord_abc")
        #expect(byName["success_url"] == "https://game.example.com/unlock.html?order=ord_abc&checkout=success")
        #expect(byName["cancel_url"] == "https://game.example.com/unlock.html?order=ord_abc&checkout=cancelled")
    }

    @Test func aSessionNeedsAnIdAndAWebPage() {
        let good = Data(#"{"id":"cs_test_1","object":"checkout.session","url":"https://checkout.stripe.com/c/pay/cs_test_1","expires_at":1767312000}"#.utf8)
        #expect(CheckoutSessionForm.session(from: good)
            == Order.Checkout(sessionID: "cs_test_1", url: "https://checkout.stripe.com/c/pay/cs_test_1",
                              expiresAt: Date(timeIntervalSince1970: 1_767_312_000)))
        #expect(CheckoutSessionForm.session(from: Data(#"{"id":"cs_1","url":null}"#.utf8)) == nil)
        #expect(CheckoutSessionForm.session(from: Data(#"{"id":"cs_1","url":"javascript:alert(1)"}"#.utf8)) == nil)
        #expect(CheckoutSessionForm.session(from: Data(#"{"id":"","url":"https://x.example"}"#.utf8)) == nil)
    }

    @Test func anExpiryNoStoredTimeCanHoldIsRefusedNotTrappedOn() throws {
        func answer(_ expiresAt: String) -> Data {
            Data(#"{"id":"cs_1","url":"https://pay.example/cs_1","expires_at":\#(expiresAt)}"#.utf8)
        }
        for far in ["9223372036854775807", "-9223372036854775808", "253402300800", "100000000000000000"] {
            guard let checkout = CheckoutSessionForm.session(from: answer(far)) else { continue }
            // What storing the order does with it (this traps for 2^63 − 1).
            let stored = checkout.expiresAt.map(UTCCivilTime.text) ?? "none"
            Issue.record("expires_at \(far) was taken, stored as \(stored)")
        }
        let last = try #require(CheckoutSessionForm.session(from: answer("253402300799"))?.expiresAt)
        #expect(UTCCivilTime.text(last) == "9999-12-31T23:59:59Z")
    }

    @Test func aRefusalIsReadInTheProvidersWords() {
        let body = Data(#"{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: sk_test_****1234"}}"#.utf8)
        let refusal = CheckoutSessionForm.refusal(from: body)
        #expect(refusal?.type == "invalid_request_error" && refusal?.message == "Invalid API Key provided: sk_test_****1234")
        #expect(CheckoutSessionForm.refusal(from: Data("<html>".utf8)) == nil)
    }

    @Test func theProvidersAnswersBecomeWhatThePlayerIsTold() throws {
        let url = URL(string: "https://api.example/v1/checkout/sessions")!
        func answer(_ status: Int, _ body: String) -> Result<Order.Checkout, CheckoutError> {
            CheckoutClient.result(data: Data(body.utf8),
                                  response: HTTPURLResponse(url: url, statusCode: status, httpVersion: nil, headerFields: nil), error: nil)
        }
        let ok = answer(200, #"{"id":"cs_1","url":"https://pay.example/cs_1"}"#)
        #expect(try ok.get().sessionID == "cs_1")
        guard case .failure(let badKey) = answer(401, #"{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: sk_t***"}}"#),
              case .failure(let refused) = answer(400, #"{"error":{"type":"invalid_request_error","message":"Missing required param: success_url."}}"#),
              case .failure(let noPage) = answer(200, #"{"id":"cs_1"}"#),
              case .failure(let html) = answer(500, "<html>"),
              case .failure(let slow) = CheckoutClient.result(data: nil, response: nil, error: URLError(.timedOut))
        else {
            Issue.record("every one of these must fail")
            return
        }
        #expect(badKey.message.contains("payment key was refused (Invalid API Key provided: sk_t***)"))
        #expect(refused.message.contains("Missing required param: success_url."))
        #expect(noPage.message.contains("no checkout page"))
        #expect(html.message.contains("HTTP 500"))
        #expect(slow.message.contains("did not answer in time"))
        #expect([badKey, refused, noPage, html, slow].allSatisfy { $0.apiError.status == 502 && $0.message.contains("charged") })
    }
}
