/// An operator's password: made by the service, never chosen by a person, and stored only as a
/// salted PBKDF2-HMAC-SHA256 hash (docs/SECURITY.md, "Operators").
///
/// A password is 20 characters of Crockford's base 32 (100 random bits), shown once, in groups
/// of five for reading aloud. With that much chance in it no list of likely passwords helps an
/// attacker, so the hash's rounds are defence in depth against a stolen database, not its only
/// guard; they are stored with each hash, so a later build can raise them and still check an
/// older hash.
public enum OperatorPassword {
    /// Rounds of PBKDF2 for a new hash.
    public static let iterations = 100_000
    /// The longest text, in bytes, checked as a password at all: a made password is 20
    /// characters, 23 with its dashes, a little more with spaces typed between the groups.
    public static let maximumTypedLength = 64
    static let saltBytes = 16
    static let hashBytes = 32
    static let scheme = "pbkdf2-sha256"
    /// Crockford's base 32: no I, L, O or U, so nothing reads as another character.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A new random password, e.g. `K7Q4M-2XD9P-3RTV8-6WNAB`.
    public static func generate<Generator: RandomNumberGenerator>(using random: inout Generator) -> String {
        var characters: [UInt8] = []
        for index in 0..<20 {
            if index > 0 && index % 5 == 0 { characters.append(UInt8(ascii: "-")) }
            characters.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)])
        }
        return String(decoding: characters, as: UTF8.self)
    }

    public static func generate() -> String {
        var random = SystemRandomNumberGenerator()
        return generate(using: &random)
    }

    /// The stored form of `password`: `pbkdf2-sha256$ROUNDS$SALT$HASH`, salt and hash in hex.
    public static func hash<Generator: RandomNumberGenerator>(_ password: String, iterations: Int = iterations,
                                                              using random: inout Generator) -> String {
        let salt = (0..<saltBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
        let derived = PBKDF2.sha256(password: Array(normalized(password).utf8), salt: salt, iterations: iterations, length: hashBytes)
        return "\(scheme)$\(iterations)$\(SHA256.hex(salt))$\(SHA256.hex(derived))"
    }

    public static func hash(_ password: String, iterations: Int = iterations) -> String {
        var random = SystemRandomNumberGenerator()
        return hash(password, iterations: iterations, using: &random)
    }

    /// Whether `password` is the one `stored` was made from. False for a stored form this build
    /// cannot read (another scheme, rounds out of range), never a trap: the rounds come from the
    /// database and are bounded before they are used.
    public static func matches(_ password: String, stored: String) -> Bool {
        // The typed text comes from outside: HMAC hashes a key longer than its block on every
        // one of the rounds, so a 64 KiB "password" would cost minutes of a core. No password
        // this service makes is longer than a few dozen bytes as typed.
        guard password.utf8.count <= maximumTypedLength else { return false }
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == scheme,
              let rounds = Int(parts[1]), (1...10_000_000).contains(rounds),
              let salt = HMACSHA256.bytes(hex: String(parts[2])), !salt.isEmpty, salt.count <= 64,
              let expected = HMACSHA256.bytes(hex: String(parts[3])), expected.count == hashBytes
        else { return false }
        let derived = PBKDF2.sha256(password: Array(normalized(password).utf8), salt: salt, iterations: rounds, length: hashBytes)
        return HMACSHA256.constantTimeEquals(derived, expected)
    }

    /// The password as typed, read leniently: case, spaces and dashes do not matter, and the
    /// letters Crockford reads as digits (O, I, L) are taken as those digits.
    static func normalized(_ typed: String) -> String {
        var out = ""
        for character in typed.uppercased() where character != "-" && character != " " {
            switch character {
            case "O": out.append("0")
            case "I", "L": out.append("1")
            default: out.append(character)
            }
        }
        return out
    }
}
