/// PBKDF2 with HMAC-SHA256 (RFC 8018, section 5.2), for storing operators' passwords: written
/// out as SHA256 and HMACSHA256 are (no CryptoKit on Linux, no outside packages), and checked
/// against RFC 7914's test vectors.
public enum PBKDF2 {
    /// The first `length` bytes of the key derived from `password` and `salt` in `iterations`
    /// rounds. `iterations` and `length` must be positive.
    public static func sha256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        precondition(iterations > 0 && length > 0, "PBKDF2 needs at least one round and one byte")
        var derived: [UInt8] = []
        derived.reserveCapacity(length + 32)
        var blockIndex: UInt32 = 1
        while derived.count < length {
            let indexBytes: [UInt8] = [UInt8(blockIndex >> 24), UInt8(blockIndex >> 16 & 0xff),
                                       UInt8(blockIndex >> 8 & 0xff), UInt8(blockIndex & 0xff)]
            var round = HMACSHA256.authenticationCode(for: salt + indexBytes, key: password)
            var block = round
            for _ in 1..<iterations {
                round = HMACSHA256.authenticationCode(for: round, key: password)
                for index in block.indices { block[index] ^= round[index] }
            }
            derived.append(contentsOf: block)
            blockIndex += 1
        }
        return Array(derived.prefix(length))
    }
}
