/// HMAC-SHA256 (RFC 2104 over ``SHA256``), written out for the same reason as SHA256: no
/// CryptoKit on Linux and no outside packages. Checked against RFC 4231's test vectors.
public enum HMACSHA256 {
    /// SHA-256 works on 64-byte blocks.
    static let blockSize = 64

    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        // A key longer than a block is hashed first; then it is zero-padded to a block.
        var block = key.count > blockSize ? SHA256.hash(key) : key
        block.append(contentsOf: repeatElement(0, count: blockSize - block.count))
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message)
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }

    /// Whether two byte strings are equal, taking the same time wherever they differ, so a
    /// forger cannot learn a valid code a byte at a time from response times. Only the lengths
    /// (public: 32 bytes for SHA-256) decide early.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }

    /// Bytes from hex text (either case); nil for an odd length or a non-hex character.
    public static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
