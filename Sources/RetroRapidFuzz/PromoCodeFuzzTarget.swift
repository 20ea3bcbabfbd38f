import RetroRapidDomain

/// Text (as UTF-8 bytes, invalid sequences repaired) into `PromoCode.normalise`
/// (Sources/RetroRapidDomain/PromoCode.swift), what `codes create` and `POST
/// /api/v1/codes/redeem` run on every code. Properties:
/// - a refusal is `.invalid` on the field `code`;
/// - a normalised code is 4 to 32 of A–Z and 0–9, and normalises to itself;
/// - it is exactly the input's ASCII letters (uppercased) and digits, in order: nothing but
///   spaces and dashes was dropped and nothing was folded into a letter;
/// - the same code typed in lowercase with dashes between its characters is the same code.
///
/// And `CodeStrength` (Sources/RetroRapidDomain/CodeStrength.swift), the guessability check
/// `codes create` runs on the same codes:
/// - `weaknesses(normalised:)` answers any string (the raw input too), `tooShort` exactly when
///   it has fewer than `minimumLength` bytes;
/// - `weaknesses(of:)` refuses what `normalise` refuses and otherwise judges the normalised code;
/// - a code with no weakness has the minimum length, letters and digits mixed, no run of more
///   than `longestRun` letters or digits, no symbol three times in a row and no four in order;
///   `lettersOnly` / `digitsOnly` exactly for a code of only letters / only digits;
/// - `grouped` of an accepted code normalises back to it;
/// - the input's first `randomLength` bytes as symbols of `LinkCode.alphabet` (what `random()`
///   draws from, deterministically here so that libFuzzer can follow it): when that code has
///   no weakness (`random()` would return it), `normalise` accepts it unchanged, and grouped.
public enum PromoCodeFuzzTarget: FuzzTarget {
    public static let name = "promo-code"
    public static let outcomes: Set<String> = ["accepted-weak", "accepted-strong", "refused"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let text = String(decoding: input, as: UTF8.self)
        try checkAnyString(text)
        try checkDrawnCode(input)
        let code: String
        do {
            code = try PromoCode.normalise(text)
        } catch let error as StoreError {
            guard error.code == .invalid, error.field == "code", !error.message.isEmpty else {
                throw PropertyViolation("a refusal that is not .invalid on code: \(error)")
            }
            guard (try? CodeStrength.weaknesses(of: text)) == nil else {
                throw PropertyViolation("CodeStrength judged a code normalise refuses")
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
        let weaknesses = CodeStrength.weaknesses(normalised: code)
        guard (try? CodeStrength.weaknesses(of: text)) == weaknesses else {
            throw PropertyViolation("weaknesses(of:) of '\(text)' differ from those of its code '\(code)'")
        }
        guard (try? PromoCode.normalise(CodeStrength.grouped(code))) == code else {
            throw PropertyViolation("'\(CodeStrength.grouped(code))' is not the code '\(code)'")
        }
        try checkStrength(code, weaknesses)
        return weaknesses.isEmpty ? "accepted-strong" : "accepted-weak"
    }

    static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) }
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// Any string gets an answer, and `tooShort` is exactly about its length.
    static func checkAnyString(_ text: String) throws(PropertyViolation) {
        let weaknesses = CodeStrength.weaknesses(normalised: text)
        let length = text.utf8.count
        let short = weaknesses.contains(.tooShort(length: length))
        guard short == (length < CodeStrength.minimumLength),
              weaknesses.allSatisfy({ if case .tooShort(let n) = $0 { n == length } else { true } }) else {
            throw PropertyViolation("weaknesses \(weaknesses) of a string of \(length) bytes")
        }
    }

    /// What holds of a normalised code's weaknesses, checked without CodeStrength's helpers.
    static func checkStrength(_ code: String, _ weaknesses: [CodeStrength.Weakness]) throws(PropertyViolation) {
        let bytes = Array(code.utf8)
        let allLetters = bytes.allSatisfy(isLetter), allDigits = bytes.allSatisfy(isDigit)
        guard weaknesses.contains(.lettersOnly) == allLetters, weaknesses.contains(.digitsOnly) == allDigits else {
            throw PropertyViolation("'\(code)' has weaknesses \(weaknesses)")
        }
        guard weaknesses.isEmpty else { return }
        var longestRun = 0, run = 0, longestOrdered = 1, ordered = 1, step = 0, triple = false
        for index in bytes.indices {
            run = index > 0 && isLetter(bytes[index]) == isLetter(bytes[index - 1]) ? run + 1 : 1
            longestRun = max(longestRun, run)
            if index >= 2 && bytes[index] == bytes[index - 1] && bytes[index] == bytes[index - 2] { triple = true }
            let difference = index > 0 ? Int(bytes[index]) - Int(bytes[index - 1]) : 0
            if index > 0 && abs(difference) == 1 && isLetter(bytes[index]) == isLetter(bytes[index - 1]) {
                ordered = difference == step ? ordered + 1 : 2
                step = difference
            } else {
                ordered = 1
                step = 0
            }
            longestOrdered = max(longestOrdered, ordered)
        }
        guard bytes.count >= CodeStrength.minimumLength, !allLetters, !allDigits,
              longestRun <= CodeStrength.longestRun, !triple, longestOrdered < 4 else {
            throw PropertyViolation("'\(code)' passed as strong")
        }
    }

    /// The input's first bytes as a code of `random()`'s alphabet: if it has no weakness,
    /// `random()` could have returned it, and it must then be a valid code as it is.
    static func checkDrawnCode(_ input: [UInt8]) throws(PropertyViolation) {
        guard input.count >= CodeStrength.randomLength else { return }
        let alphabet = Array(LinkCode.alphabet.utf8)
        let code = String(decoding: input.prefix(CodeStrength.randomLength).map { alphabet[Int($0) % alphabet.count] }, as: UTF8.self)
        guard CodeStrength.weaknesses(normalised: code).isEmpty else { return }
        guard (try? PromoCode.normalise(code)) == code, (try? PromoCode.normalise(CodeStrength.grouped(code))) == code else {
            throw PropertyViolation("'\(code)', which random() could draw, is not a valid code as it is")
        }
    }
}
