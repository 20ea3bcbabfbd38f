import Foundation
import RetroRapidDomain

/// The one call this server makes to the payment provider, as data: the form that opens a
/// hosted checkout session, and the provider's answers read back. Pure (no I/O), so its
/// encoding and parsing are unit-tested; `CheckoutClient` sends it.
///
/// It follows Stripe's API (docs/API.md, "Paying through a hosted checkout"):
/// `POST /v1/checkout/sessions`, `application/x-www-form-urlencoded` with Stripe's bracket
/// notation for nested fields, `Authorization: Bearer <secret key>`; the answer is the Session
/// object (`id`, `url`, `expires_at`), a refusal `{"error": {"type", "code", "message", …}}`.
enum CheckoutSessionForm {
    /// What the player sees on the provider's page for the one line item.
    static let productName = "RetroRapid unlimited play"

    /// The session's fields, in the order they are sent.
    /// - Parameters:
    ///   - orderID: our order's public id: `client_reference_id` and `metadata[order]`, how the
    ///     webhook names the order it paid.
    ///   - publicBaseURL: this site, e.g. `https://game.example.com`; the provider sends the
    ///     player back to the Unlock page with the order and the outcome in the query.
    static func fields(orderID: String, amount: Money, publicBaseURL: String) -> [(String, String)] {
        let back = "\(publicBaseURL)/unlock.html?order=\(orderID)&checkout="
        return [
            ("mode", "payment"),
            ("line_items[0][price_data][currency]", amount.currency.lowercased()),
            ("line_items[0][price_data][unit_amount]", String(amount.minorUnits)),
            ("line_items[0][price_data][product_data][name]", productName),
            ("line_items[0][quantity]", "1"),
            ("success_url", back + "success"),
            ("cancel_url", back + "cancelled"),
            ("client_reference_id", orderID),
            ("metadata[order]", orderID),
        ]
    }

    /// `application/x-www-form-urlencoded` as browsers and Stripe's own libraries write it
    /// (WHATWG URL standard): ASCII letters, digits and `*-._` as they are, space as `+`, every
    /// other byte of the UTF-8 as `%XX` (brackets too).
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(encodeComponent($0.0))=\(encodeComponent($0.1))" }.joined(separator: "&")
    }

    static func encodeComponent(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }

    private struct SessionJSON: Decodable {
        let id: String
        let url: String?
        let expires_at: Int64?
    }

    private struct ErrorJSON: Decodable {
        struct Detail: Decodable {
            let type: String?
            let code: String?
            let message: String?
        }
        let error: Detail
    }

    /// The session from a 2xx answer; nil when it is not a Session object with an id and an
    /// http(s) `url` (a page the browser can be sent to), or when its `expires_at` is not a time
    /// the database can store (`UTCCivilTime.storableSeconds`: storing 2^63 − 1 would trap).
    static func session(from body: Data) -> Order.Checkout? {
        guard let session = try? JSONDecoder().decode(SessionJSON.self, from: body), !session.id.isEmpty,
              let url = session.url, let scheme = URLComponents(string: url)?.scheme?.lowercased(),
              scheme == "https" || scheme == "http",
              session.expires_at.map(UTCCivilTime.storableSeconds.contains) ?? true
        else { return nil }
        return Order.Checkout(sessionID: session.id, url: url,
                              expiresAt: session.expires_at.map { Date(timeIntervalSince1970: TimeInterval($0)) })
    }

    /// The provider's own words from a refusal, e.g. "Invalid API Key provided: sk_test_***1234"
    /// (type authentication_error); nil when the body is not its error shape.
    static func refusal(from body: Data) -> (type: String?, message: String)? {
        guard let error = try? JSONDecoder().decode(ErrorJSON.self, from: body) else { return nil }
        let message = error.error.message ?? error.error.code ?? error.error.type ?? "no message"
        return (error.error.type, message)
    }
}
