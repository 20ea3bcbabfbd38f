import RetroRapidDomain
import Testing

/// HMAC-SHA256 against RFC 4231's test vectors.
@Suite struct HMACSHA256Tests {
    static func hmacHex(key: [UInt8], _ message: String) -> String {
        SHA256.hex(HMACSHA256.authenticationCode(for: Array(message.utf8), key: key))
    }

    @Test func rfc4231TestCase1() {
        #expect(Self.hmacHex(key: [UInt8](repeating: 0x0b, count: 20), "Hi There")
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func rfc4231TestCase2KeyShorterThanTheOutput() {
        #expect(Self.hmacHex(key: Array("Jefe".utf8), "what do ya want for nothing?")
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func rfc4231TestCase6KeyLargerThanABlockIsHashedFirst() {
        #expect(Self.hmacHex(key: [UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First")
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func rfc4231TestCase7LargeKeyAndLargeData() {
        let data = "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
        #expect(Self.hmacHex(key: [UInt8](repeating: 0xaa, count: 131), data)
            == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test func constantTimeEqualityComparesEveryByte() {
        let code = HMACSHA256.authenticationCode(for: [1, 2, 3], key: [4])
        #expect(HMACSHA256.constantTimeEquals(code, code))
        for index in [0, 15, 31] {
            var altered = code
            altered[index] ^= 0x01
            #expect(!HMACSHA256.constantTimeEquals(code, altered), "byte \(index)")
        }
        #expect(!HMACSHA256.constantTimeEquals(code, Array(code.prefix(31))))
        #expect(!HMACSHA256.constantTimeEquals(code, []))
        #expect(HMACSHA256.constantTimeEquals([], []))
    }

    @Test func hexIsDecodedInEitherCaseAndRefusedWhenMalformed() {
        #expect(HMACSHA256.bytes(hex: "00ff7fA0") == [0x00, 0xff, 0x7f, 0xa0])
        #expect(HMACSHA256.bytes(hex: "") == [])
        #expect(HMACSHA256.bytes(hex: "abc") == nil)
        #expect(HMACSHA256.bytes(hex: "zz") == nil)
        #expect(HMACSHA256.bytes(hex: "0x12") == nil)
    }
}
