import Testing
import RetroRapidRules
@testable import RetroRapidServer

@Suite("RoomCode")
struct RoomCodeTests {
    @Test func theAlphabetHasNoLookAlikesAndIsAPowerOfTwo() {
        #expect(RoomCode.alphabet.count == 32)
        for character in "0O1I" { #expect(!RoomCode.alphabet.contains(character)) }
        #expect(Set(RoomCode.alphabet).count == 32)
    }

    @Test func codesFromASeededSourceRepeatAndUseOnlyTheAlphabet() {
        var a = SplitMix64(seed: 42)
        var b = SplitMix64(seed: 42)
        let first = (0..<50).map { _ in RoomCode(random: { a.next() }) }
        let second = (0..<50).map { _ in RoomCode(random: { b.next() }) }
        #expect(first == second)
        #expect(Set(first).count == 50)
        for code in first {
            #expect(code.text.count == RoomCode.length)
            #expect(code.text.allSatisfy { RoomCode.alphabet.contains($0) })
        }
    }

    @Test func everyCharacterCanBeDrawn() {
        var random = SplitMix64(seed: 7)
        var seen = Set<Character>()
        for _ in 0..<200 { seen.formUnion(RoomCode(random: { random.next() }).text) }
        #expect(seen == Set(RoomCode.alphabet))
    }

    @Test func readingIgnoresCaseSpacesAndDashes() {
        #expect(RoomCode(reading: "K7QXM2")?.text == "K7QXM2")
        #expect(RoomCode(reading: "k7qxm2")?.text == "K7QXM2")
        #expect(RoomCode(reading: " k7q-xm2 ")?.text == "K7QXM2")
        #expect(RoomCode(reading: "K7Q XM-2")?.text == "K7QXM2")
    }

    @Test(arguments: ["", "K7QXM", "K7QXM22", "K0QXM2", "KOQXM2", "K1QXM2", "KIQXM2", "K7QXM!", "K7_XM2", "Ｋ7QXM2"])
    func anythingElseIsNotACode(typed: String) {
        #expect(RoomCode(reading: typed) == nil)
    }
}
