import RetroRapidRules
import Testing
@testable import RetroRapidServer

/// `MoveMessageReader` reads exactly the moves the general reader reads the same way, and
/// leaves every other text to it.
@Suite("Move message reader")
struct MoveMessageReaderTests {
    func general(_ text: String) -> ClientMessage? {
        try? ClientMessage.decode(Array(text.utf8))
    }

    @Test("the usual moves read as the general reader reads them")
    func usualMoves() {
        for direction in ["left", "right"] {
            for step in [0, 1, 9, 10, 12, 99, 100, 4_321, 999_999_999_999_999] {
                let text = #"{"type":"move","direction":"\#(direction)","step":\#(step)}"#
                let fast = MoveMessageReader.read(Array(text.utf8))
                #expect(fast != nil, "\(text)")
                #expect(fast == general(text), "\(text)")
            }
        }
        #expect(MoveMessageReader.read(Array(#"{"type":"move","direction":"right","step":7}"#.utf8))
                == .move(direction: .right, seenStep: 7))
    }

    @Test("anything else is left to the general reader")
    func everythingElse() {
        let others = [
            #"{"type":"move","direction":"left","step":012}"#,           // leading zero: not JSON
            #"{"type":"move","direction":"left","step":-1}"#,
            #"{"type":"move","direction":"left","step":1.5}"#,
            #"{"type":"move","direction":"left","step":1e3}"#,
            #"{"type":"move","direction":"left","step":}"#,
            #"{"type":"move","direction":"left","step":"12"}"#,
            #"{"type":"move","direction":"left","step":1234567890123456}"#,  // past the fast path's digits
            #"{"type":"move","direction":"left","step":12 }"#,
            #"{"type":"move","direction":"left","step":12}x"#,
            #"{"type":"move","direction":"left","step":12"#,
            #"{"type":"move","direction":"up","step":12}"#,
            #"{"type":"move","direction":"Left","step":12}"#,
            #"{"type":"move","direction":"left","step":12,"step":13}"#,
            #"{"type":"move","direction":"left","step":12,"extra":1}"#,
            #"{"type":"move","step":12,"direction":"left"}"#,               // another order: the general reader's
            #"{ "type":"move","direction":"left","step":12}"#,
            #"{"type":"ping"}"#,
            "",
        ]
        for text in others {
            #expect(MoveMessageReader.read(Array(text.utf8)) == nil, "\(text)")
        }
        // Those the general reader does take, it takes the same way the fast one would have.
        #expect(general(#"{"type":"move","step":12,"direction":"left"}"#) == .move(direction: .left, seenStep: 12))
    }

    /// A client may write any number of digits: every run from 1 to 400 digits, of nines (the
    /// largest value for its length) and of the digits of 2^63 and beyond, is read by the fast
    /// reader only while it fits and never traps.
    @Test func digitRunsOfAnyLengthNeverTrap() {
        var fastReadMaximum = 0
        for count in 1...400 {
            for digits in [String(repeating: "9", count: count), String(String(repeating: "9223372036854775808", count: 22).prefix(count))] {
                let text = #"{"type":"move","direction":"left","step":\#(digits)}"#
                if let fast = MoveMessageReader.read(Array(text.utf8)) {
                    #expect(fast == general(text), "\(text)")
                    fastReadMaximum = max(fastReadMaximum, count)
                } else if count <= 15 {
                    Issue.record("\(count) digits should be read by the fast reader: \(text)")
                }
            }
        }
        #expect(fastReadMaximum == 15)
        #expect(general(#"{"type":"move","direction":"left","step":9223372036854775807}"#) == .move(direction: .left, seenStep: .max))
        #expect(general(#"{"type":"move","direction":"left","step":9223372036854775808}"#) == nil)
        #expect(general(#"{"type":"move","direction":"left","step":99999999999999999999}"#) == nil)
    }
}
