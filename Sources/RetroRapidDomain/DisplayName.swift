import Foundation

/// A player's name as shown on leaderboards and in announcements (docs/API.md).
///
/// The rules, checked on the Unicode general category of every scalar
/// (`Unicode.Scalar.Properties`):
/// - 1 to 24 characters after the spaces at both ends are trimmed. A character is a grapheme
///   cluster (what a reader sees as one letter), so "é" typed as `e` + U+0301 counts once.
///   At most ``maximumScalars`` code points in all, so a name's size is bounded too.
/// - Letters of any script (`L*`, so Arabic, Cyrillic, Devanagari, Han… all work), decimal
///   digits of any script (`Nd`), the plain space U+0020, `-` and `_`. Combining marks (`Mn`,
///   `Mc`) only inside a character that starts with a letter or digit, at most
///   ``maximumMarksPerCharacter`` of them, so accents and Indic vowel signs work but a "Zalgo"
///   stack cannot cover the leaderboard row above.
/// - Nothing invisible or that changes how text around it is drawn: no control (`Cc`), format
///   (`Cf`: zero-width space and joiner, bidi overrides such as U+202E, soft hyphen U+00AD) or
///   other default-ignorable scalar (variation selectors, the Hangul fillers that are
///   categorised as letters but draw nothing), no other kind of space (tab, no-break space,
///   line separators), no unassigned or private-use code points.
/// - No emoji. Emoji are symbols (`So`), not letters, so they are refused even when Unicode
///   files one under `L*` (U+2139 ℹ), because a screen reader speaks them as long
///   descriptions and they make names hard to type or say.
/// - Words are separated by single spaces: no run of two or more.
/// - At least one letter or digit: "-" or "_ _" is not a name.
///
/// The accepted name is stored trimmed and in Unicode NFC, so the same name typed with
/// precomposed or combining accents is the same text. Names are not unique: the public id
/// tells players apart. Look-alike letters from different scripts (Latin "a", Cyrillic "а")
/// are not detected.
public struct DisplayName: Sendable, Hashable, CustomStringConvertible {
    /// The name as stored and shown: trimmed, NFC.
    public let value: String

    public static let maximumLength = 24
    public static let maximumMarksPerCharacter = 4
    /// Code points in the whole name: 24 characters do not bound them (a run of Hangul
    /// leading jamo is one character however long), so this does, generously (24 Devanagari
    /// conjuncts with a vowel sign are 96).
    public static let maximumScalars = 128

    /// What every refusal message ends with, so a player always learns what is allowed.
    public static let rules = "A display name is 1 to 24 characters: letters, digits, single spaces between words, '-' and '_' (no emoji, symbols or invisible characters)."

    /// Validates `raw` and keeps its trimmed NFC form.
    /// - Throws: `StoreError(.invalid, …, field: "displayName")` saying what is wrong and what is allowed.
    public init(_ raw: String) throws {
        let name = Self.trimmingSpaces(raw).precomposedStringWithCanonicalMapping
        guard !name.isEmpty else {
            throw Self.refusal("The display name is empty.")
        }
        guard name.count <= Self.maximumLength else {
            throw Self.refusal("The display name is too long (\(name.count) characters).")
        }
        guard name.unicodeScalars.count <= Self.maximumScalars else {
            throw Self.refusal("The display name is made of too many code points (\(name.unicodeScalars.count); at most \(Self.maximumScalars)).")
        }
        var hasLetterOrDigit = false
        var previousWasSpace = false
        for character in name {
            let scalars = Array(character.unicodeScalars)
            // Invisible and emoji scalars first: their message is the useful one even where
            // they sit in the middle of a character (U+200D inside an emoji sequence).
            for scalar in scalars {
                if let reason = Self.forbiddenReason(scalar) {
                    throw Self.refusal("The display name contains \(Self.codePoint(scalar)), \(reason).")
                }
            }
            let first = scalars[0]
            if first == " " || first == "-" || first == "_" {
                guard scalars.count == 1 else {
                    throw Self.refusal("The display name contains \(Self.codePoint(scalars[1])), a mark with no letter or digit to sit on.")
                }
                if first == " " {
                    guard !previousWasSpace else {
                        throw Self.refusal("The display name has two or more spaces in a row.")
                    }
                    previousWasSpace = true
                } else {
                    previousWasSpace = false
                }
                continue
            }
            previousWasSpace = false
            guard !Self.isMark(first) else {
                throw Self.refusal("The display name contains \(Self.codePoint(first)), a mark with no letter or digit to sit on.")
            }
            guard Self.isLetterOrDigit(first) else {
                throw Self.refusal("The display name contains \(Self.codePoint(first)), which is not a letter, digit, space, '-' or '_'.")
            }
            var marks = 0
            for scalar in scalars.dropFirst() {
                if Self.isMark(scalar) {
                    marks += 1
                } else if !Self.isLetterOrDigit(scalar) {
                    // A letter may join the character (an Indic conjunct); anything else may not.
                    throw Self.refusal("The display name contains \(Self.codePoint(scalar)), which is not a letter, digit, space, '-' or '_'.")
                }
            }
            guard marks <= Self.maximumMarksPerCharacter else {
                throw Self.refusal("The display name stacks more than \(Self.maximumMarksPerCharacter) accents or marks on one character.")
            }
            hasLetterOrDigit = true
        }
        guard hasLetterOrDigit else {
            throw Self.refusal("The display name has no letter or digit.")
        }
        self.value = name
    }

    public var description: String { value }

    /// "Racer 4821": what a new player is called until they choose a name. Four random digits
    /// make it unlikely that two players on one leaderboard page look the same; it is not
    /// meant to be unique.
    public static func random() -> DisplayName {
        var generator = SystemRandomNumberGenerator()
        // Known to pass the rules above, so no validation is needed.
        return DisplayName(trusted: "Racer \(Int.random(in: 1000...9999, using: &generator))")
    }

    private init(trusted value: String) {
        self.value = value
    }

    // MARK: - Rules on one scalar

    /// Why `scalar` may never appear in a name, or nil when it may (subject to where it sits).
    static func forbiddenReason(_ scalar: Unicode.Scalar) -> String? {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control:
            return "a control character (such as a tab or a line break)"
        case .format:
            return "an invisible formatting character (such as a zero-width space or joiner, a soft hyphen or a text-direction control)"
        case .spaceSeparator where scalar != " ", .lineSeparator, .paragraphSeparator:
            return "a kind of space other than the plain space"
        case .unassigned, .privateUse, .surrogate:
            return "which is not a character Unicode assigns"
        default:
            break
        }
        if properties.isDefaultIgnorableCodePoint {
            return "an invisible character"
        }
        // 0-9, # and * carry the Emoji property only as keycap bases; every other emoji is out.
        if properties.isEmoji, !scalar.isASCII {
            return "an emoji or symbol"
        }
        return nil
    }

    static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber:
            return true
        default:
            return false
        }
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark: return true
        default: return false
        }
    }

    /// Only U+0020 is trimmed: a tab or no-break space at an edge is refused, not hidden.
    static func trimmingSpaces(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { $0 != " " }),
              let last = scalars.lastIndex(where: { $0 != " " }) else { return "" }
        return String(scalars[start...last])
    }

    /// "U+202E": how a message names a character that may be invisible or confusing if echoed.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    static func refusal(_ problem: String) -> StoreError {
        StoreError(.invalid, "\(problem) \(rules)", field: "displayName")
    }
}
