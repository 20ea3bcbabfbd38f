/// A short code that joins a new device to a player (docs/API.md): 8 symbols of Crockford's
/// base32 alphabet, shown grouped as `K7Q4-M2XD`.
///
/// The alphabet has no I, L, O or U, so nothing reads as another symbol (or spells a word).
/// Entry forgives what people do when copying a code from another screen: case, dashes and
/// spaces are ignored, and, as Crockford's decoding rules say, O is read as 0 and I or L as 1.
///
/// 8 symbols are 40 random bits from the system CSPRNG. That is too few to resist an offline
/// search of its hash (minutes to hours on one GPU), and does not need to: a code works once, for
/// minutes (``LinkCodeRepository``). Its `description` is redacted so a log line cannot leak a
/// live code.
public struct LinkCode: Sendable, Hashable, CustomStringConvertible {
    /// Crockford's base32: digits and letters without I, L, O, U.
    public static let alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    public static let length = 8

    /// The 8 symbols, upper case, no dash: what is hashed and compared.
    public let normalized: String

    /// How a player sees it: `K7Q4-M2XD`.
    public var displayText: String {
        String(normalized.prefix(Self.length / 2)) + "-" + String(normalized.suffix(Self.length / 2))
    }

    /// Reads a code as a player typed it; nil when it is not 8 symbols of the alphabet once
    /// case, dashes and spaces are set aside (a code with a U, or 7 symbols, or 9).
    public init?(parsing entry: String) {
        // Far longer than any honest entry: refuse before looking at it.
        guard entry.utf8.count <= 64 else { return nil }
        var symbols: [UInt8] = []
        for byte in entry.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: " "):
                continue
            case UInt8(ascii: "o"), UInt8(ascii: "O"):
                symbols.append(UInt8(ascii: "0"))
            case UInt8(ascii: "i"), UInt8(ascii: "I"), UInt8(ascii: "l"), UInt8(ascii: "L"):
                symbols.append(UInt8(ascii: "1"))
            default:
                let upper = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
                guard Self.alphabetBytes.contains(upper) else { return nil }
                symbols.append(upper)
            }
        }
        guard symbols.count == Self.length else { return nil }
        self.normalized = String(decoding: symbols, as: UTF8.self)
    }

    private init(normalized: String) {
        self.normalized = normalized
    }

    /// A new random code.
    package static func generate() -> LinkCode {
        LinkCode(normalized: randomSymbols(count: length))
    }

    /// SHA-256 of the normalised symbols: the only form `link_codes` stores.
    package var hash: [UInt8] { SHA256.hash(Array(normalized.utf8)) }

    public var description: String { "LinkCode(redacted)" }

    private static let alphabetBytes = Array(alphabet.utf8)

    /// `count` symbols of ``alphabet``, each uniform (32 divides 2⁶⁴, so `next(upperBound:)`
    /// has no bias), from `SystemRandomNumberGenerator`: the OS CSPRNG (`getrandom(2)` on
    /// Linux). Also makes players' public ids.
    package static func randomSymbols(count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var symbols: [UInt8] = []
        symbols.reserveCapacity(count)
        for _ in 0..<count {
            symbols.append(alphabetBytes[Int(generator.next(upperBound: UInt64(alphabetBytes.count)))])
        }
        return String(decoding: symbols, as: UTF8.self)
    }
}
