import RetroRapidStorage

/// Text (as UTF-8 bytes, invalid sequences repaired) into `PromoCode.normalise`
/// (Sources/RetroRapidStorage/PromoCode.swift), what `codes create` and `POST
/// /api/v1/codes/redeem` run on every code. Properties:
/// - a refusal is `.invalid` on the field `code`;
/// - a normalised code is 4 to 32 of A–Z and 0–9, and normalises to itself;
/// - it is exactly the input's ASCII letters (uppercased) and digits, in order: nothing but
///   spaces and dashes was dropped and nothing was folded into a letter;
/// - the same code typed in lowercase with dashes between its characters is the same code.
public enum PromoCodeFuzzTarget: FuzzTarget {
    public static let name = "promo-code"
    public static let outcomes: Set<String> = ["accepted", "refused"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let text = String(decoding: input, as: UTF8.self)
        let code: String
        do {
            code = try PromoCode.normalise(text)
        } catch let error as StoreError {
            guard error.code == .invalid, error.field == "code", !error.message.isEmpty else {
                throw PropertyViolation("a refusal that is not .invalid on code: \(error)")
            }
            return "refused"
        } catch {
            throw PropertyViolation("an error that is not a StoreError: \(error)")
        }
        let bytes = Array(code.utf8)
        guard PromoCode.lengthRange.contains(bytes.count),
              bytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) else {
            throw PropertyViolation("normalised to '\(code)', not 4 to 32 of A-Z and 0-9")
        }
        let kept = text.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
        guard String(String.UnicodeScalarView(kept)).uppercased() == code else {
            throw PropertyViolation("normalised to '\(code)', not the input's letters and digits")
        }
        guard (try? PromoCode.normalise(code)) == code else { throw PropertyViolation("'\(code)' does not normalise to itself") }
        let retyped = code.lowercased().map(String.init).joined(separator: "-")
        guard (try? PromoCode.normalise(retyped)) == code else { throw PropertyViolation("'\(retyped)' is not the same code as '\(code)'") }
        return "accepted"
    }
}
