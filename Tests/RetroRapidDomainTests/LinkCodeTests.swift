import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// LinkCode: a value, tested without any storage.
@Suite struct LinkCodeTests {
    @Test func parsingNormalisesOneWayAndRefusesWhatIsNotACode() {
        #expect(LinkCode(parsing: "k0il-OoLz")?.normalized == "K011001Z")
        #expect(LinkCode(parsing: "k0il-OoLz")?.displayText == "K011-001Z")
        #expect(LinkCode(parsing: " K7Q4 m2xd ")?.displayText == "K7Q4-M2XD")
        for bad in ["", "K7Q4-M2X", "K7Q4-M2XDD", "K7Q4-M2XU", "K7Q4_M2XD", "K7Q4.M2XD", "K7Q4-M2XÐ", "K7Q4\u{200B}M2XD", String(repeating: "-", count: 100) + "K7Q4M2XD"] {
            #expect(LinkCode(parsing: bad) == nil, "\(bad) should not parse")
        }
        #expect(!"\(LinkCode(parsing: "K7Q4-M2XD")!)".contains("K7Q4"))
    }
}
