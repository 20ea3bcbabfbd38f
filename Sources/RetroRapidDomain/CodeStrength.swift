/// How guessable a promo code is, judged before the operator creates one
/// (`retrorapid codes create`, Sources/retrorapid/CodesCommand.swift). Anyone can try codes at
/// POST /api/v1/codes/redeem, and the rate limits only slow them down: a code people would
/// think of (a word, a word and a year, a pattern) is found by trying the likely ones first.
/// A strong code is long and random: `random()` makes one.
///
/// Pure and total: any text in, an answer out (the fuzz target calls `weaknesses(normalised:)`
/// with arbitrary strings). Any thread.
public enum CodeStrength {
    /// Fewer characters than this is too short (once normalised: dashes and spaces do not count).
    public static let minimumLength = 10
    /// A run of more letters than this reads as a word; of more digits, as a date or a number.
    public static let longestRun = 4
    /// Symbols in a code from `random()`: 12 of 32, about 59 bits once the few draws that
    /// would look like a pattern are thrown away.
    public static let randomLength = 12

    /// One reason a code is easy to guess.
    public enum Weakness: Sendable, Equatable, CustomStringConvertible {
        case tooShort(length: Int)
        case lettersOnly
        case digitsOnly
        /// A run of letters long enough to be a word (or words): `ARCTICCONF`, `SUMMER`.
        case wordLike(String)
        /// A run of digits long enough to be a date or a number: `20260228`.
        case numberLike(String)
        /// A character three times in a row (`AAA`), or the code one part repeated (`X7K2X7K2`).
        case repeated(String)
        /// Four or more letters or digits in order, either way: `ABCD`, `1234`, `9876`.
        case sequence(String)

        public var description: String {
            switch self {
            case .tooShort(let length): "it has \(length) letters and digits; at least \(CodeStrength.minimumLength) are needed"
            case .lettersOnly: "it has only letters, so it reads as words, which are tried first"
            case .digitsOnly: "it has only digits, so it reads as a number or a date"
            case .wordLike(let run): "\(run) reads as a word (more than \(CodeStrength.longestRun) letters in a row)"
            case .numberLike(let run): "\(run) reads as a number or a date (more than \(CodeStrength.longestRun) digits in a row)"
            case .repeated(let part): "it repeats \(part)"
            case .sequence(let run): "\(run) is a sequence"
            }
        }
    }

    /// The weaknesses of a code as typed (normalised first, see ``PromoCode/normalise(_:)``);
    /// empty for a strong code. Throws the same `.invalid` as `normalise` for a malformed one.
    public static func weaknesses(of code: String) throws -> [Weakness] {
        weaknesses(normalised: try PromoCode.normalise(code))
    }

    /// The weaknesses of a normalised code (A–Z and 0–9). Anything else in `code` counts as
    /// neither a letter nor a digit, so any string gets an answer.
    public static func weaknesses(normalised code: String) -> [Weakness] {
        let bytes = Array(code.utf8)
        var found: [Weakness] = []
        if bytes.count < minimumLength { found.append(.tooShort(length: bytes.count)) }
        let letters = bytes.filter(isLetter).count
        let digits = bytes.filter(isDigit).count
        if !bytes.isEmpty && letters == bytes.count {
            found.append(.lettersOnly)
        } else if !bytes.isEmpty && digits == bytes.count {
            found.append(.digitsOnly)
        } else {
            for run in runs(bytes) where run.count > longestRun {
                let text = String(decoding: run, as: UTF8.self)
                found.append(isLetter(run[run.startIndex]) ? .wordLike(text) : .numberLike(text))
            }
        }
        if let part = repetition(bytes) { found.append(.repeated(String(decoding: part, as: UTF8.self))) }
        if let run = sequence(bytes) { found.append(.sequence(String(decoding: run, as: UTF8.self))) }
        return found
    }

    /// What to tell the operator about a weak code: why, and what a strong one looks like.
    public static func explanation(code: String, _ weaknesses: [Weakness]) -> String {
        "code \(code) is easy to guess: " + weaknesses.map(\.description).joined(separator: "; ")
            + ". A strong code has at least \(minimumLength) letters and digits mixed, no more than \(longestRun) letters "
            + "or digits in a row, no repeats or sequences; for example \(grouped(random())) ('--random' makes one). "
            + "To create this one anyway (the rate limits are then all that protects it), add --force."
    }

    /// A new strong code, normalised: `randomLength` symbols of ``LinkCode/alphabet`` (no I, L,
    /// O or U, so nothing reads as another symbol), from the OS's random source, drawn again
    /// until it has no weakness.
    public static func random() -> String {
        while true {
            let code = LinkCode.randomSymbols(count: randomLength)
            if weaknesses(normalised: code).isEmpty { return code }
        }
    }

    /// Groups of four for people to read and type: `K7Q4-M2XD-9P3R` (dashes do not matter).
    public static func grouped(_ code: String) -> String {
        var groups: [String] = []
        var rest = Substring(code)
        while !rest.isEmpty {
            groups.append(String(rest.prefix(4)))
            rest = rest.dropFirst(4)
        }
        return groups.joined(separator: "-")
    }

    // MARK: - Patterns

    private static func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func sameKind(_ a: UInt8, _ b: UInt8) -> Bool {
        (isLetter(a) && isLetter(b)) || (isDigit(a) && isDigit(b))
    }

    /// Maximal runs of letters, and of digits (other bytes end a run).
    private static func runs(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var runs: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let letters = isLetter(bytes[start])
            guard letters || isDigit(bytes[start]) else { start += 1; continue }
            var end = start + 1
            while end < bytes.count && (letters ? isLetter(bytes[end]) : isDigit(bytes[end])) { end += 1 }
            runs.append(bytes[start..<end])
            start = end
        }
        return runs
    }

    /// A byte three times in a row, or the shortest part the whole code repeats (at least twice,
    /// the last copy possibly cut short: `X7K2X7K2X7`).
    private static func repetition(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        if bytes.count >= 3 {
            for index in 2..<bytes.count where bytes[index] == bytes[index - 1] && bytes[index] == bytes[index - 2] {
                return bytes[(index - 2)...index]
            }
        }
        guard bytes.count >= 4 else { return nil }
        for period in 1...(bytes.count / 2) where (period..<bytes.count).allSatisfy({ bytes[$0] == bytes[$0 - period] }) {
            return bytes[0..<period]
        }
        return nil
    }

    /// Four or more letters (or digits) each one after the one before, going up or down.
    private static func sequence(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        for step in [1, -1] {
            var start = 0
            for index in 1...max(1, bytes.count) where index <= bytes.count {
                let continues = index < bytes.count && sameKind(bytes[index], bytes[index - 1])
                    && Int(bytes[index]) - Int(bytes[index - 1]) == step
                if !continues {
                    if index - start >= 4 { return bytes[start..<index] }
                    start = index
                }
            }
        }
        return nil
    }
}
