import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// PaymentWebhook's signature header: a value, tested without any storage.
@Suite struct PaymentWebhookSignatureTests {
    static let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    static func signed(_ body: [UInt8], at time: Date = now, secret: String = "whsec_test") -> String {
        PaymentWebhook.signatureHeader(body: body, secret: Array(secret.utf8), timestamp: time)
    }

    /// The header computed with `openssl dgst -sha256 -hmac whsec_test` over the same bytes.
    @Test func theSignatureHeaderMatchesAnIndependentHMAC() {
        let body = Array(#"{"id":"evt_1","type":"order.paid","order":"ord_x"}"#.utf8)
        #expect(Self.signed(body) == "t=1767225600,v1=1ab8c12ce55b3bdcf844df6be748395d4f48cfdccad9995b011157575dbaea8f")
    }
}
