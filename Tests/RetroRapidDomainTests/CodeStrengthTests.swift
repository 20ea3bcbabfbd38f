import Testing
@testable import RetroRapidDomain

@Suite("CodeStrength")
struct CodeStrengthTests {
    @Test func wordsNamesAndDatesAreWeak() throws {
        #expect(try CodeStrength.weaknesses(of: "ARCTICCONF") == [.lettersOnly])
        #expect(try CodeStrength.weaknesses(of: "press-2026") == [.tooShort(length: 9), .wordLike("PRESS")])
        #expect(try CodeStrength.weaknesses(of: "SUMMERSALE2026") == [.wordLike("SUMMERSALE")])
        #expect(try CodeStrength.weaknesses(of: "XK-20260228") == [.numberLike("20260228")])
        #expect(try CodeStrength.weaknesses(of: "1234567890") == [.digitsOnly, .sequence("123456789")])
        #expect(try CodeStrength.weaknesses(of: "NEWCODE") == [.tooShort(length: 7), .lettersOnly])
    }

    @Test func patternsAreWeak() throws {
        #expect(try CodeStrength.weaknesses(of: "X7K2X7K2X7") == [.repeated("X7K2")])
        #expect(try CodeStrength.weaknesses(of: "K7Q4M2XD9AAA") == [.repeated("AAA")])
        #expect(try CodeStrength.weaknesses(of: "K7ABCD2XD9P3") == [.sequence("ABCD")])
        #expect(try CodeStrength.weaknesses(of: "K7Q4M2XD6543") == [.sequence("6543")])
        #expect(try CodeStrength.weaknesses(of: "A1A1A1A1A1A1") == [.repeated("A1")])
    }

    @Test func mixedRandomLookingCodesAreStrong() throws {
        for code in ["K7Q4-M2XD-9P3R", "7HJ2KQ9M4TXB", "ab12cd34ef56", "Z9Y8-X7W6-V5T4"] {
            #expect(try CodeStrength.weaknesses(of: code) == [], "\(code)")
        }
        // Three letters in order is not yet a sequence; four is.
        #expect(try CodeStrength.weaknesses(of: "ABC7K2Q9M4TX") == [])
    }

    @Test func malformedCodesAreRefusedAsNormaliseRefusesThem() {
        #expect(throws: StoreError.self) { try CodeStrength.weaknesses(of: "AB") }
        #expect(throws: StoreError.self) { try CodeStrength.weaknesses(of: "NEW!CODE") }
    }

    @Test func anyStringGetsAnAnswer() {
        // What a fuzz target feeds it: nothing here may trap.
        for text in ["", "A", "AA", "AAA", "é", "\u{0}\u{0}\u{0}\u{0}", "-- --", String(repeating: "Z", count: 10_000), "09", "90"] {
            _ = CodeStrength.weaknesses(normalised: text)
        }
        #expect(CodeStrength.weaknesses(normalised: "") == [.tooShort(length: 0)])
    }

    @Test func randomCodesAreStrongDistinctAndOfTheAlphabet() throws {
        var seen: Set<String> = []
        for _ in 0..<500 {
            let code = CodeStrength.random()
            #expect(code.count == CodeStrength.randomLength)
            #expect(code.allSatisfy { LinkCode.alphabet.contains($0) })
            #expect(try CodeStrength.weaknesses(of: code) == [])
            #expect(try PromoCode.normalise(CodeStrength.grouped(code)) == code)
            seen.insert(code)
        }
        #expect(seen.count == 500)
        #expect(CodeStrength.grouped("K7Q4M2XD9P3R") == "K7Q4-M2XD-9P3R")
    }

    @Test func theExplanationSaysWhyWhatIsStrongAndHowToForceIt() throws {
        let text = CodeStrength.explanation(code: "ARCTICCONF", try CodeStrength.weaknesses(of: "ARCTICCONF"))
        #expect(text.hasPrefix("code ARCTICCONF is easy to guess: it has only letters"))
        #expect(text.contains("at least 10 letters and digits mixed"))
        #expect(text.contains("--random") && text.contains("--force"))
    }
}
