import Foundation
import Testing
@testable import RetroRapidServer

/// The reader behind `ClientMessage.decode`: strict JSON, the known fields read, the rest
/// checked and skipped, and the same answers as Foundation's parser on what is JSON at all.
@Suite("Client message reader")
struct ClientMessageReaderTests {
    func read(_ text: String) throws(ClientMessageReader.Failure) -> RawClientMessage {
        try ClientMessageReader.read(Array(text.utf8))
    }

    func failure(_ bytes: [UInt8]) -> ClientMessageReader.Failure? {
        do {
            _ = try ClientMessageReader.read(bytes)
            return nil
        } catch {
            return error
        }
    }

    func failure(_ text: String) -> ClientMessageReader.Failure? { failure(Array(text.utf8)) }

    @Test func readsEveryKnownField() throws {
        let raw = try read(#"{"type":"hello","token":"t0k","client":"Firefox","level":"fast","direction":"left","practice":true,"step":42}"#)
        #expect(raw.type == "hello" && raw.token == "t0k" && raw.client == "Firefox" && raw.level == "fast")
        #expect(raw.direction == "left" && raw.practice == true && raw.step == 42)
        let empty = try read("{}")
        #expect(empty.type == nil && empty.step == nil && empty.practice == nil)
    }

    @Test func whitespaceAroundEverythingIsAllowed() throws {
        let raw = try read(" \n\t{ \"type\" :\r\n \"move\" , \"step\" : -7 , \"practice\" : false }\n ")
        #expect(raw.type == "move" && raw.step == -7 && raw.practice == false)
    }

    @Test func escapesAndUnicodeAreDecoded() throws {
        let raw = try read(#"{"token":"a\"b\\c\/d\n\t\u00e9\ud83d\ude97","client":"é🚗 plain"}"#)
        #expect(raw.token == "a\"b\\c/d\n\t\u{e9}\u{1F697}")
        #expect(raw.client == "é🚗 plain")
    }

    @Test func unknownFieldsOfEveryKindAreSkipped() throws {
        let raw = try read(#"{"extra":{"a":[1,2.5e-3,{"b":null}],"c":"\u0041"},"type":"pause","n":-0.0,"t":true,"f":false,"z":null,"s":"é"}"#)
        #expect(raw.type == "pause")
    }

    @Test func nullIsAnAbsentField() throws {
        let raw = try read(#"{"type":null,"step":null,"practice":null,"token":"x"}"#)
        #expect(raw.type == nil && raw.step == nil && raw.practice == nil && raw.token == "x")
    }

    @Test func aRepeatedFieldKeepsItsLastValue() throws {
        #expect(try read(#"{"step":1,"step":2}"#).step == 2)
    }

    @Test func stepMustBeAnIntegerThatFits() throws {
        #expect(try read(#"{"step":0}"#).step == 0)
        #expect(try read(#"{"step":1.0}"#).step == 1)
        #expect(try read(#"{"step":1e2}"#).step == 100)
        #expect(try read(#"{"step":9223372036854775807}"#).step == Int.max)
        #expect(try read(#"{"step":-9223372036854775808}"#).step == Int.min)
        for wrong in ["1.5", "9223372036854775808", "-9223372036854775809", "1e400", "\"12\"", "true", "[1]", "{}",
                      "9223372036854775808.0", "1e19", "1e-999999999999999999999"] {
            let raw = try read(#"{"step":\#(wrong)}"#)
            #expect(raw.wrongFields == .step && raw.step == nil, "step \(wrong)")
        }
    }

    /// Integrality and the value come from the decimal digits, not a Double (which rounds
    /// beyond 2^53): 922337203685477580.7 is not an integer.
    @Test func aStepWithAFractionOrExponentIsReadExactly() throws {
        for wrong in ["922337203685477580.7", "1.0000000000000000001", "12345678901234567e-1"] {
            let raw = try read(#"{"step":\#(wrong)}"#)
            #expect(raw.wrongFields == .step && raw.step == nil, "step \(wrong)")
        }
        #expect(try read(#"{"step":9007199254740993.0}"#).step == 9_007_199_254_740_993)
        #expect(try read(#"{"step":9223372036854775807.0}"#).step == Int.max)
        #expect(try read(#"{"step":-9223372036854775808.0e0}"#).step == Int.min)
        #expect(try read(#"{"step":0.5e1}"#).step == 5)
        #expect(try read(#"{"step":100e-2}"#).step == 1)
        #expect(try read(#"{"step":1E+18}"#).step == 1_000_000_000_000_000_000)
        #expect(try read(#"{"step":-0.0}"#).step == 0)
        #expect(try read(#"{"step":0e999999999999999999999}"#).step == 0)
    }

    @Test func knownFieldsOfTheWrongKindAreNotedNotRefused() throws {
        #expect(try read(#"{"type":1}"#).wrongFields == .type)
        #expect(try read(#"{"practice":"yes"}"#).wrongFields == .practice)
        let token = try read(#"{"token":["x"],"type":"ping"}"#)
        #expect(token.wrongFields == .token && token.token == nil && token.type == "ping")
        #expect(try read(#"{"level":2,"direction":3}"#).wrongFields == [.level, .direction])
        // The last member of a name decides, as for the value.
        #expect(try read(#"{"step":"x","step":3}"#).wrongFields.isEmpty)
        let overwritten = try read(#"{"step":3,"step":"x"}"#)
        #expect(overwritten.wrongFields == .step && overwritten.step == nil)
    }

    @Test func invalidJSONIsNotJSONEvenWhenAFieldIsAlsoWrong() {
        #expect(failure(#"{"type":1,"x":}"#) == .notJSON)
    }

    @Test func valuesThatAreNotObjectsAreNamedSo() {
        for text in ["[1,2,3]", #""hello""#, "42", "null", "true", " [] "] {
            #expect(failure(text) == .notAnObject, "\(text)")
        }
    }

    /// Texts that are not JSON, each checked against Foundation's parser as well.
    static let notJSON: [String] = [
        "", " ", "{", "}", "{}x", "{} {}", #"{"a" 1}"#, "{'a':1}", #"{"a":01}"#, #"{"a":1.}"#,
        #"{"a":.5}"#, #"{"a":-}"#, #"{"a":+1}"#, #"{"a":1e}"#, #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":"\x"}"#,
        #"{"a":"\u12"}"#, #"{"a":"\u12G4"}"#, "{\"a\":\"tab\there\"}", #"{"a":"unterminated}"#, #"{"a":[1,2}"#,
        #"{"a":{"b"}}"#, #"{a:1}"#, #"{"a":1 "b":2}"#, "[", #"{"a":NaN}"#, #"{"a":Infinity}"#,
        #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud800\u0041"}"#,
    ]

    /// Texts that are JSON, of every shape the reader skips.
    static let json: [String] = [
        "{}", "[]", "0", "-0", "1.5e+10", "\"\"", #"{"a":[[],{}]}"#, #"{"a":"\u00e9\ud83d\ude97"}"#,
        #"{"a":-1.25E-2}"#, "{\"é\":\"ü\"}", #"{"a":"\\\/\b\f\n\r\t"}"#,
    ]

    @Test(arguments: notJSON) func notJSONIsRefusedAsFoundationRefusesIt(text: String) {
        #expect(failure(text) == .notJSON)
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) == nil)
    }

    @Test(arguments: json) func jsonIsAcceptedAsFoundationAcceptsIt(text: String) {
        #expect(failure(text) != .notJSON)
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil)
    }

    /// RFC 8259 has no trailing commas. Foundation's parser takes them; this reader does not
    /// (no client of ours writes them: JSON.stringify never does).
    @Test func aTrailingCommaIsNotJSON() {
        #expect(failure(#"{"a":1,}"#) == .notJSON)
        #expect(failure(#"{"a":[1,]}"#) == .notJSON)
    }

    @Test func bytesThatAreNotUTF8AreNotJSON() {
        // A byte never used, a lone continuation, a cut sequence, one cut by the quote, an
        // encoded surrogate, an overlong slash.
        let invalid: [[UInt8]] = [[0xFF], [0x80], [0xC3, 0x28], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]]
        for bytes in invalid {
            #expect(failure(Array(#"{"token":""#.utf8) + bytes + Array(#""}"#.utf8)) == .notJSON, "in a field: \(bytes)")
            #expect(failure(Array(#"{"other":""#.utf8) + bytes + Array(#""}"#.utf8)) == .notJSON, "skipped: \(bytes)")
        }
    }

    @Test func nestingStopsAt512Levels() {
        let deep = String(repeating: "[", count: 511) + String(repeating: "]", count: 511)
        #expect(failure(#"{"a":\#(deep)}"#) == nil)
        let tooDeep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(failure(#"{"a":\#(tooDeep)}"#) == .notJSON)
    }
}
