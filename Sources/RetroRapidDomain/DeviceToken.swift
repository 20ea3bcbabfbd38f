/// The secret that signs a device in as its player (docs/API.md, "Players and devices").
///
/// 256 random bits, given to the client once as 43 characters of URL-safe base64 without
/// padding (RFC 4648 §5: `A–Z a–z 0–9 - _`), so it fits a header, a cookie or a URL without
/// escaping. The database keeps only its SHA-256 (``hash``): a copy of the database, a backup
/// or a log of its rows cannot sign anyone in, and 256 random bits need no salt or slow hash,
/// because there is nothing to guess.
///
/// `description` is redacted, so interpolating a token into a log line does not leak it; use
/// ``text`` only where the token is meant to go: the one response that hands it to the client.
public struct DeviceToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public static let byteCount = 32
    /// 32 bytes are 256 bits: 42 characters of 6 bits and a 43rd holding the last 4.
    public static let textLength = 43

    /// The token as the client stores and presents it.
    public let text: String
    /// The 32 random bytes the text encodes; what ``hash`` is taken over.
    let bytes: [UInt8]

    /// A new token from the operating system's CSPRNG. `SystemRandomNumberGenerator` is the
    /// system source, never a seeded generator: on Linux the Swift runtime fills it with
    /// `getrandom(2)` (reading `/dev/urandom` where that call is missing), on Apple platforms
    /// with `arc4random_buf(3)`.
    public static func generate() -> DeviceToken {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for _ in 0..<(byteCount / 8) {
            let word: UInt64 = generator.next()
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
        }
        return DeviceToken(bytes: bytes)
    }

    /// Parses a token presented by a client. Returns nil unless `text` is exactly 43 URL-safe
    /// base64 characters in canonical form (the 2 unused low bits of the last character zero),
    /// so each token has exactly one spelling and nothing malformed ever reaches the hash.
    public init?(parsing text: String) {
        let characters = Array(text.utf8)
        guard characters.count == Self.textLength else { return nil }
        var values: [UInt8] = []
        values.reserveCapacity(Self.textLength)
        for character in characters {
            guard let value = Self.sextet(character) else { return nil }
            values.append(value)
        }
        guard values[Self.textLength - 1] & 0b11 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for value in values {
            accumulator = (accumulator << 6) | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
            }
        }
        self.init(bytes: bytes)
    }

    init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a device token is \(Self.byteCount) bytes")
        self.bytes = bytes
        self.text = Self.encode(bytes)
    }

    /// SHA-256 of the token's 32 bytes: the only form the database stores (`devices.token_hash`).
    public var hash: [UInt8] { SHA256.hash(bytes) }

    public var description: String { "DeviceToken(redacted)" }
    public var debugDescription: String { description }

    // MARK: - URL-safe base64 without padding

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 5) / 6)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            accumulator = (accumulator << 8) | UInt32(byte)
            bitCount += 8
            while bitCount >= 6 {
                bitCount -= 6
                output.append(alphabet[Int((accumulator >> UInt32(bitCount)) & 0x3F)])
            }
        }
        if bitCount > 0 {
            output.append(alphabet[Int((accumulator << UInt32(6 - bitCount)) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
