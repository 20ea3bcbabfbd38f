import Foundation
import Testing
@testable import RetroRapidServer
@testable import RetroRapidDomain
@testable import RetroRapidSQLite

/// What docs/openapi.json says about `displayName`, `code`, `cursor` and `Stripe-Signature`
/// held to the code that enforces it: each pattern and length limit is run, with ICU's regular
/// expressions, against the server's own rules.
@Suite("OpenAPI constraints")
struct OpenAPIConstraintsTests {
    static func property(_ schema: String, _ name: String) throws -> [String: Any] {
        let components = try #require(try OpenAPITests.document()["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: [String: Any]])
        let properties = try #require(schemas[schema]?["properties"] as? [String: Any])
        return try #require(properties[name] as? [String: Any], "\(schema).\(name)")
    }

    /// What a JSON Schema validator decides: the pattern (anchored in the document) matches
    /// the whole text, and the length in code points is within the limits stated.
    struct Constraint {
        let regex: NSRegularExpression
        let minLength: Int?
        let maxLength: Int?

        init(_ schema: [String: Any]) throws {
            regex = try NSRegularExpression(pattern: try #require(schema["pattern"] as? String))
            minLength = schema["minLength"] as? Int
            maxLength = schema["maxLength"] as? Int
        }

        func admits(_ text: String) -> Bool {
            let length = text.unicodeScalars.count
            if let minLength, length < minLength { return false }
            if let maxLength, length > maxLength { return false }
            let whole = NSRange(text.startIndex..., in: text)
            return regex.firstMatch(in: text, range: whole)?.range == whole
        }
    }

    @Test func aPromoCodeMatchesThePatternExactlyWhenTheServerReadsIt() throws {
        let code = try Constraint(try Self.property("Redeem", "code"))
        func served(_ text: String) -> Bool { (try? PromoCode.normalise(text)) != nil }
        // Every Unicode scalar, between letters: ignored (a separator), read (a letter or
        // digit), or refused, and the document must say the same.
        for value in 0...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "AB" + String(Character(scalar)) + "CD"
            #expect(code.admits(text) == served(text), "U+\(String(value, radix: 16, uppercase: true))")
        }
        for text in ["abc", "ABCD", "a-b-c-d", " ARCTIC CONF ", "–ARCTIC—CONF–", String(repeating: "A", count: 32),
                     String(repeating: "A", count: 33), String(repeating: "A-", count: 32), "", "----", "ARCTIC_CONF"] {
            #expect(code.admits(text) == served(text), "\(text)")
        }
    }

    @Test func aLinkCodeMatchesThePatternExactlyWhenTheServerReadsIt() throws {
        let code = try Constraint(try Self.property("LinkCodeClaim", "code"))
        func served(_ text: String) -> Bool { LinkCode(parsing: text) != nil }
        for value in 0...0x24F {
            let text = "K7Q4" + String(Character(Unicode.Scalar(value)!)) + "M2XD"
            #expect(code.admits(text) == served(text), "U+\(String(value, radix: 16))")
        }
        for text in ["K7Q4M2XD", "k7q4-m2xd", " K7Q4 M2XD ", "K7Q4M2X", "K7Q4M2XD9", "OIL0OIL0", "K7Q4M2XU",
                     String(repeating: " ", count: 56) + "K7Q4M2XD", String(repeating: " ", count: 57) + "K7Q4M2XD"] {
            #expect(code.admits(text) == served(text), "'\(text)'")
        }
    }

    @Test func everyNameTheServerTakesMatchesThePatternAndSpacingMistakesDoNot() throws {
        for schema in ["NewPlayer", "MeUpdate"] {
            let name = try Constraint(try Self.property(schema, "displayName"))
            func served(_ text: String) -> Bool { (try? DisplayName(text)) != nil }
            let taken = ["Ada", "  Ada Lovelace  ", "R2-D2_x", "Zoë", "Zoe\u{0308}", "नमस्ते", "李小龍", "Ωμέγα 9",
                         String(repeating: "a", count: 24), " x", "١٢٣"]
            for text in taken {
                #expect(served(text), "\(text)")
                #expect(name.admits(text), "\(schema): '\(text)'")
            }
            // The rules the pattern states, refused by both.
            for text in ["", " ", "   ", "Ada  Lovelace", "Ada\tL", "Ada\nL", "A\u{7F}", "A\u{85}B"] {
                #expect(!served(text), "'\(text)'")
                #expect(!name.admits(text), "\(schema): '\(text)'")
            }
        }
    }

    @Test func cursorsTheServerWritesMatchAndTextOutsideThePatternIsRefused() throws {
        let documented = try Constraint(try Self.property("LeaderboardPage", "nextCursor"))
        #expect(documented.maxLength == LeaderboardCursor.maximumLength)
        let written = LeaderboardCursor(.init(level: .rapid, period: .thisWeek, periodKey: "2026-W48", score: 123_456,
                                              achievedAt: "2026-11-29T23:59:02Z", playerID: Int64.max))
        #expect(documented.admits(written.rawValue))
        #expect(written.position != nil)
        // The same text with base64's padding decodes to the same position, but is not the
        // form given out, and is refused like anything else outside the pattern.
        let padded = written.rawValue + String(repeating: "=", count: (4 - written.rawValue.utf8.count % 4) % 4)
        try #require(padded != written.rawValue, "pick a position whose cursor needs padding")
        #expect(!documented.admits(padded))
        #expect(LeaderboardCursor(rawValue: padded).position == nil)
        #expect(!documented.admits("") && LeaderboardCursor(rawValue: "").position == nil)
        let tooLong = String(repeating: "A", count: LeaderboardCursor.maximumLength + 1)
        #expect(!documented.admits(tooLong) && LeaderboardCursor(rawValue: tooLong).position == nil)
        // The query parameter says the same as the field it is copied from.
        let document = try OpenAPITests.document()
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        let parameters = try #require(paths["/api/v1/leaderboards/{level}/{period}"]?["get"]?["parameters"] as? [[String: Any]])
        let cursor = try #require(parameters.first { $0["name"] as? String == "cursor" }?["schema"] as? [String: Any])
        #expect(cursor["pattern"] as? String == documented.regex.pattern && cursor["maxLength"] as? Int == 200)
    }

    @Test func theServerRefusesACursorOutsideThePatternWithA400() throws {
        let server = try RunningGameServer()
        for cursor in ["", "a+b", "abc%3D", String(repeating: "A", count: 201)] {
            let response = try server.request("GET", "/api/v1/leaderboards/fast/today?cursor=\(cursor)")
            #expect(response.status == 400, "'\(cursor)'")
        }
    }

    @Test func thePaymentSignatureExampleIsAValidSignatureOfTheExampleBody() throws {
        let document = try OpenAPITests.document()
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        let webhook = try #require(paths["/api/v1/payments/webhook"]?["post"])
        let parameters = try #require(webhook["parameters"] as? [[String: Any]])
        let header = try #require(parameters.first { $0["name"] as? String == PaymentWebhook.signatureHeaderName })
        let example = try #require((header["schema"] as? [String: Any])?["example"] as? String)
        let content = try #require((webhook["requestBody"] as? [String: Any])?["content"] as? [String: Any])
        // The example body as the provider would send it: compact JSON, keys sorted.
        let bodyExample = try #require((content["application/json"] as? [String: Any])?["example"])
        let body = String(decoding: try JSONSerialization.data(withJSONObject: bodyExample, options: [.sortedKeys, .withoutEscapingSlashes]),
                          as: UTF8.self)
        #expect(body.contains(#""type":"checkout.session.completed""#))
        let parsed = try #require(PaymentWebhook.parseHeader(example))
        #expect(example == PaymentWebhook.signatureHeader(body: Array(body.utf8), secret: Array("example-secret".utf8),
                                                          timestamp: Date(timeIntervalSince1970: TimeInterval(parsed.timestamp))))
    }
}
