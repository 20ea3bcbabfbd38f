import Foundation
import RetroRapidDomain
import Testing

/// The display-name rules on their own (no database): what is accepted and stored, and what
/// is refused with a message that says what is allowed.
@Suite struct DisplayNameTests {
    @Test(arguments: [
        ("Racer 4821", "Racer 4821"),
        ("Ada", "Ada"),
        ("x", "x"),
        ("7", "7"),
        ("Zoë", "Zoë"),
        // Combining diaeresis: stored precomposed (NFC), so both spellings are one name.
        ("Zoe\u{308}", "Zo\u{EB}"),
        // Spaces at the ends are trimmed, not refused.
        ("  Ada Lovelace  ", "Ada Lovelace"),
        ("José-María_2", "José-María_2"),
        ("李小龍", "李小龍"),
        ("Алёна", "Алёна"),
        ("محمد علي", "محمد علي"),
        ("שרה כהן", "שרה כהן"),
        ("राहुल", "राहुल"),
        ("स्त्री", "स्त्री"),
        ("x\u{301}\u{302}\u{303}\u{304}", "x\u{301}\u{302}\u{303}\u{304}"),  // 4 marks: the most
        ("Nguyễn Văn An", "Nguyễn Văn An"),
        ("٣٤٥ Racer", "٣٤٥ Racer"),
        ("ＲＡＣＥＲ", "ＲＡＣＥＲ"),
        ("abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
        ("一二三四五六七八九十一二三四五六七八九十一二三四", "一二三四五六七八九十一二三四五六七八九十一二三四"),
    ])
    func acceptedNamesAreStoredTrimmedAndComposed(raw: String, stored: String) throws {
        let name = try DisplayName(raw)
        #expect(name.value == stored)
        #expect(name.value.unicodeScalars.elementsEqual(stored.precomposedStringWithCanonicalMapping.unicodeScalars))
    }

    /// 24 characters of "é" written as e + U+0301 are 48 scalars and still 24 characters:
    /// length counts what a reader sees (grapheme clusters), not code points or bytes.
    @Test func lengthCountsCharactersNotScalars() throws {
        let decomposed = String(repeating: "e\u{301}", count: 24)
        #expect(decomposed.unicodeScalars.count == 48)
        #expect(try DisplayName(decomposed).value.count == 24)
        #expect(throws: StoreError.self) { try DisplayName(decomposed + "e\u{301}") }
        // A Devanagari conjunct with its vowel sign is one character too.
        #expect(try DisplayName(String(repeating: "क्षि", count: 24)).value.count == 24)
    }

    @Test func codePointsAreBoundedWhereCharactersAreNot() throws {
        // Leading jamo join into one character however many there are: 129 of them are one
        // "character", and refused for their size.
        let jamo = String(repeating: "\u{1100}", count: 129)
        #expect(jamo.count == 1)
        #expect {
            try DisplayName(jamo)
        } throws: { error in
            (error as? StoreError)?.message.contains("too many code points (129; at most 128)") == true
        }
    }

    @Test(arguments: [
        ("", "empty"),
        ("     ", "empty"),
        ("abcdefghijklmnopqrstuvwxy", "too long (25"),
        ("一二三四五六七八九十一二三四五六七八九十一二三四五", "too long (25"),
        ("Bob\u{202E}kcaJ", "U+202E"),          // right-to-left override
        ("Bob\u{202D}", "U+202D"),              // left-to-right override
        ("\u{2067}Bob", "U+2067"),              // right-to-left isolate
        ("Bo\u{200D}b", "U+200D"),              // zero-width joiner
        ("Bo\u{200C}b", "U+200C"),              // zero-width non-joiner
        ("Bo\u{200B}b", "U+200B"),              // zero-width space
        ("\u{FEFF}Bob", "U+FEFF"),              // byte order mark / zero-width no-break space
        ("Bo\u{00AD}b", "U+00AD"),              // soft hyphen
        ("Bob\u{FE0F}", "U+FE0F"),              // variation selector
        ("\u{3164}", "U+3164"),                 // Hangul filler: a "letter" that draws nothing
        ("Bob\u{3164}Bob", "U+3164"),
        ("Bob\tSmith", "U+0009"),               // tab
        ("\tBob", "U+0009"),                    // a tab at an edge is refused, not trimmed
        ("Bob\nSmith", "U+000A"),
        ("Bob\u{0}", "U+0000"),
        ("Bob\u{00A0}Smith", "U+00A0"),         // no-break space
        ("Bob\u{3000}Smith", "U+3000"),         // ideographic space
        ("Bob\u{2028}Smith", "U+2028"),         // line separator
        ("Bob  Smith", "two or more spaces"),
        ("Racer 🏎️", "U+1F3CE"),               // emoji are symbols, not letters
        ("😀", "U+1F600"),
        ("👍🏽", "U+1F44D"),
        ("1️⃣", "U+FE0F"),                       // keycap: digit + variation selector + U+20E3
        ("ℹ", "U+2139"),                        // an emoji Unicode files as a lowercase letter
        ("🇬🇧", "U+1F1EC"),                      // flag: regional indicators
        ("Bob!", "U+0021"),
        ("a.b", "U+002E"),
        ("<b>", "U+003C"),
        ("Bob\u{E000}", "U+E000"),              // private use
        ("Ⅻ", "U+216B"),                        // roman numeral: a number, not a decimal digit
        ("\u{301}Bob", "U+0301"),               // a mark with no letter to sit on
        ("- \u{301}", "U+0301"),
        // x has no precomposed accented forms, so NFC leaves all 5 marks stacked on it.
        ("x\u{301}\u{302}\u{303}\u{304}\u{305}", "more than 4"),
        ("---", "no letter or digit"),
        ("_ _", "no letter or digit"),
    ])
    func refusedNamesSayWhatIsAllowed(raw: String, reason: String) {
        let error = #expect(throws: StoreError.self) { try DisplayName(raw) }
        #expect(error?.code == .invalid)
        #expect(error?.field == "displayName")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "no error") should mention \(reason)")
        #expect(error?.message.contains("1 to 24 characters: letters, digits, single spaces between words, '-' and '_'") == true)
        // The message never echoes the raw name (it may hold invisible or bidi characters).
        if raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .format }) {
            #expect(error?.message.contains(raw) == false)
        }
    }

    @Test func randomNamesLookLikeRacerAndFourDigitsAndPassTheRules() throws {
        for _ in 0..<200 {
            let name = DisplayName.random().value
            #expect(name.hasPrefix("Racer "))
            let digits = name.dropFirst("Racer ".count)
            #expect(digits.count == 4 && digits.allSatisfy { $0.isASCII && $0.isNumber })
            #expect(try DisplayName(name).value == name)
        }
    }
}
