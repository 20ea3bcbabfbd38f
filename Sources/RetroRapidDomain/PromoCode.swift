import Foundation

/// An amount of money: integer minor units (pence, cents) and an ISO 4217 currency code.
/// Never a floating-point number, so £0.99 is exactly 99 and sums are exact.
public struct Money: Sendable, Hashable, CustomStringConvertible {
    public let minorUnits: Int64
    /// Three uppercase letters, e.g. `GBP`.
    public let currency: String

    public init(minorUnits: Int64, currency: String) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// Unlimited play's default price (docs/API.md, "Unlimited play"): £2.99.
    public static let defaultUnlimitedPrice = Money(minorUnits: 299, currency: "GBP")

    /// Parses a decimal amount as people write it (`"0.99"`, `"2"`, `"1.5"`) into minor units,
    /// with the currency's number of decimals. No floating point is involved. Nil when the text
    /// is not a plain non-negative decimal, has more decimals than the currency, or overflows.
    public init?(decimal: String, currency: String) {
        let currency = currency.uppercased()
        let digits = Money.minorUnitDigits(for: currency)
        let parts = decimal.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty,
              parts.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } })
        else { return nil }
        let fraction = parts.count == 2 ? String(parts[1]) : ""
        guard parts.count == 1 || !fraction.isEmpty, fraction.count <= digits else { return nil }
        let padded = fraction + String(repeating: "0", count: digits - fraction.count)
        guard let units = Int64(String(parts[0]) + padded) else { return nil }
        self.init(minorUnits: units, currency: currency)
    }

    /// Decimals of the currency's minor unit: 2 for most (GBP, EUR, USD), 0 for JPY and a few
    /// others, 3 for the dinars that use fils.
    public static func minorUnitDigits(for currency: String) -> Int {
        switch currency.uppercased() {
        case "JPY", "KRW", "ISK", "CLP", "VND", "XAF", "XOF", "PYG", "UGX", "RWF": return 0
        case "BHD", "KWD", "OMR", "JOD", "TND", "IQD", "LYD": return 3
        default: return 2
        }
    }

    /// "£2.99", "€0.99", "$1.00", otherwise "2.99 CHF".
    public var description: String {
        let digits = Money.minorUnitDigits(for: currency)
        let magnitude = minorUnits.magnitude
        var text: String
        if digits == 0 {
            text = String(magnitude)
        } else {
            var divisor: UInt64 = 1
            for _ in 0..<digits { divisor *= 10 }
            let fraction = String(magnitude % divisor)
            text = "\(magnitude / divisor)." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        let sign = minorUnits < 0 ? "-" : ""
        switch currency {
        case "GBP": return sign + "£" + text
        case "EUR": return sign + "€" + text
        case "USD": return sign + "$" + text
        default: return sign + text + " " + currency
        }
    }

    /// A price as repositories accept it: a positive amount in a currency of three letters
    /// (lowercase is uppercased). `.invalid` on `field` otherwise.
    package func validatedPrice(field: String) throws -> Money {
        let code = currency.uppercased()
        guard code.utf8.count == 3, code.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw StoreError(.invalid, "The currency must be an ISO 4217 code of three letters, e.g. GBP.", field: field + ".currency")
        }
        guard minorUnits > 0, minorUnits <= 100_000_000 else {
            throw StoreError(.invalid, "The price must be more than 0 and at most 1000000.00, in minor units (99 for 0.99).", field: field)
        }
        return Money(minorUnits: minorUnits, currency: code)
    }
}

/// A code the operator creates (docs/API.md): a *discount* code sets the price of unlimited play
/// while it is live; an *unlock* code grants unlimited play outright.
///
/// Codes are case-, dash- and space-insensitive: `arctic-conf`, ` ArcticConf ` and `ARCTICCONF`
/// are one code, stored in the normalised form (see ``normalise(_:)``).
public struct PromoCode: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The price of unlimited play while the code is live, in place of the base price.
        case discount(Money)
        /// Unlimited play, granted when the code is redeemed.
        case unlock

        package var name: String {
            switch self {
            case .discount: return "discount"
            case .unlock: return "unlock"
            }
        }
    }

    /// The normalised code: A–Z and 0–9, 4 to 32 characters.
    public let code: String
    public let kind: Kind
    /// Redeemable from this second on; nil: from creation.
    public let startsAt: Date?
    /// Redeemable up to and including this second; nil: no expiry. A discount applies to the
    /// price until then too.
    public let expiresAt: Date?
    /// How many players may redeem it; nil: no cap.
    public let maxRedemptions: Int?
    /// How many players have redeemed it.
    public let redemptions: Int
    /// When the operator disabled it; a disabled code cannot be redeemed and its discount no
    /// longer applies.
    public let disabledAt: Date?
    public let createdAt: Date

    public init(
        code: String, kind: Kind, startsAt: Date?, expiresAt: Date?, maxRedemptions: Int?,
        redemptions: Int, disabledAt: Date?, createdAt: Date
    ) {
        self.code = code
        self.kind = kind
        self.startsAt = startsAt
        self.expiresAt = expiresAt
        self.maxRedemptions = maxRedemptions
        self.redemptions = redemptions
        self.disabledAt = disabledAt
        self.createdAt = createdAt
    }

    public var disabled: Bool { disabledAt != nil }

    /// Not disabled, started and not expired at `now` (whole seconds, both ends inclusive).
    /// The redemption cap is not part of it: a fully redeemed discount still applies to the
    /// players who redeemed it.
    public func isLive(at now: Date) -> Bool {
        liveRefusal(at: now) == nil
    }

    /// Why the code is not live at `now`, as the `.expired` refusal to give; nil when live.
    package func liveRefusal(at now: Date) -> StoreError? {
        let second = UTCCivilTime.seconds(now)
        if let disabledAt {
            return StoreError(.expired, "Code \(code) was withdrawn on \(UTCCivilTime.text(disabledAt)) and can no longer be redeemed.", field: "code")
        }
        if let startsAt, second < UTCCivilTime.seconds(startsAt) {
            return StoreError(.expired, "Code \(code) cannot be redeemed yet: it starts at \(UTCCivilTime.text(startsAt)).", field: "code")
        }
        if let expiresAt, second > UTCCivilTime.seconds(expiresAt) {
            return StoreError(.expired, "Code \(code) expired at \(UTCCivilTime.text(expiresAt)).", field: "code")
        }
        return nil
    }

    /// The smallest and largest normalised lengths.
    public static let lengthRange = 4...32

    /// The code as stored and compared: spaces and dashes removed (any Unicode whitespace and
    /// dash, since phones turn `-` into `–`), ASCII letters uppercased. What is left must be
    /// A–Z and 0–9 only, 4 to 32 of them; otherwise `.invalid` (field `code`). Non-ASCII letters
    /// are refused rather than folded (`ß` would uppercase to `SS`).
    public static func normalise(_ input: String) throws -> String {
        var result = ""
        for scalar in input.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .dashPunctuation
                || scalar == "\u{2212}" /* minus sign */ || scalar == "\u{00AD}" /* soft hyphen */ {
                continue
            }
            switch scalar.value {
            case 0x41...0x5A, 0x30...0x39: result.unicodeScalars.append(scalar)
            case 0x61...0x7A: result.unicodeScalars.append(Unicode.Scalar(scalar.value - 0x20)!)
            default:
                throw StoreError(.invalid, "A code has only letters A–Z and digits 0–9 (dashes and spaces are ignored).", field: "code")
            }
            if result.unicodeScalars.count > lengthRange.upperBound { break }
        }
        guard lengthRange.contains(result.unicodeScalars.count) else {
            throw StoreError(.invalid, "A code has \(lengthRange.lowerBound) to \(lengthRange.upperBound) letters and digits (dashes and spaces are ignored).", field: "code")
        }
        return result
    }
}

/// A player's redemption of a code. Redeeming the same code again returns an equal value.
public struct Redemption: Sendable, Equatable {
    /// The normalised code.
    public let code: String
    public let kind: PromoCode.Kind
    public let playerID: Int64
    public let redeemedAt: Date
    /// When the code (and so a discount) stops applying; nil: no expiry.
    public let expiresAt: Date?

    public init(code: String, kind: PromoCode.Kind, playerID: Int64, redeemedAt: Date, expiresAt: Date?) {
        self.code = code
        self.kind = kind
        self.playerID = playerID
        self.redeemedAt = redeemedAt
        self.expiresAt = expiresAt
    }

    /// An unlock code: the player has unlimited play.
    public var grantsUnlimited: Bool { kind == .unlock }
}

extension PromoCode {
    /// A new code as every backend accepts it, checked before anything is stored: the code
    /// normalised, a discount's price valid (its currency uppercased), a start before the
    /// expiry, an expiry not past at `now` (whole seconds), a cap of at least 1. `.invalid`
    /// naming the field otherwise.
    package static func validatedNew(code: String, kind: Kind, startsAt: Date?, expiresAt: Date?,
                                     maxRedemptions: Int?, now: Date) throws -> (code: String, price: Money?) {
        let normalised = try normalise(code)
        var price: Money?
        if case .discount(let money) = kind {
            price = try money.validatedPrice(field: "price")
        }
        if let startsAt, let expiresAt, UTCCivilTime.seconds(startsAt) >= UTCCivilTime.seconds(expiresAt) {
            throw StoreError(.invalid, "The code must start before it expires (\(UTCCivilTime.text(startsAt)) is not before \(UTCCivilTime.text(expiresAt))).", field: "expiresAt")
        }
        if let expiresAt, UTCCivilTime.seconds(expiresAt) < UTCCivilTime.seconds(now) {
            throw StoreError(.invalid, "The expiry \(UTCCivilTime.text(expiresAt)) is already past.", field: "expiresAt")
        }
        if let maxRedemptions, maxRedemptions < 1 {
            throw StoreError(.invalid, "The redemption cap must be at least 1 (leave it out for no cap).", field: "maxRedemptions")
        }
        return (normalised, price)
    }

    /// Why a new player cannot redeem the code at `now` (not live, or fully redeemed as far
    /// as ``redemptions`` says); nil when they may. The backend's capped write checks the cap
    /// again, since another player may take the last redemption meanwhile.
    package func redemptionRefusal(at now: Date) -> StoreError? {
        if let refusal = liveRefusal(at: now) { return refusal }
        if let maxRedemptions, redemptions >= maxRedemptions { return Self.fullyRedeemed(code) }
        return nil
    }

    // The refusals every backend gives about codes, in the same words.

    package static func unknown(_ code: String) -> StoreError {
        StoreError(.notFound, "There is no code \(code); check it and try again.", field: "code")
    }

    package static func fullyRedeemed(_ code: String) -> StoreError {
        StoreError(.expired, "Code \(code) has been fully redeemed.", field: "code")
    }

    package static func duplicate(_ code: String) -> StoreError {
        StoreError(.conflict, "Code \(code) already exists; codes are never reused, choose another.", field: "code")
    }

    package static func alreadyUnlimited(_ code: String) -> StoreError {
        StoreError(.conflict, "You already have unlimited play, so code \(code) was not used; it stays available to others.", field: "code")
    }
}
