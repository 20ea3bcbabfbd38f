import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// DeviceToken: a value, tested without any storage.
@Suite struct DeviceTokenTests {
    @Test func tokensAreDistinctAndParseBackToThemselves() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let token = DeviceToken.generate()
            #expect(seen.insert(token.text).inserted)
            #expect(DeviceToken(parsing: token.text) == token)
            #expect(token.hash == SHA256.hash(try #require(decodeBase64URL(token.text))))
        }
        // Every one of the 64 symbols turns up in the first 42 positions.
        #expect(Set(seen.flatMap { $0.dropLast() }) == base64URLAlphabet)
    }

    @Test func tokenDescriptionDoesNotLeakTheToken() {
        let token = DeviceToken.generate()
        #expect(!"\(token)".contains(token.text))
        #expect(!String(reflecting: token).contains(token.text))
    }

    @Test func malformedTokensAreRefusedBeforeHashing() throws {
        let valid = DeviceToken.generate().text
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: valid.last!)!
        // Same 32 bytes, but a spare low bit set in the last symbol: not the canonical spelling.
        let nonCanonical = String(valid.dropLast()) + String(alphabet[last + 1])
        for text in [
            "", String(valid.dropLast()), valid + "A", valid + "=",
            String(valid.dropLast()) + "+", "/" + String(valid.dropFirst()),
            String(valid.dropLast()) + "é", nonCanonical,
            String(repeating: "A", count: 44),
        ] {
            #expect(DeviceToken(parsing: text) == nil, "\(text) should not parse")
        }
        #expect(DeviceToken(parsing: valid) != nil)
        #expect(DeviceToken(parsing: String(repeating: "A", count: 43)) != nil)
    }
}
