import Foundation
import Testing
@testable import RetroRapidServer

/// docs/PROTOCOL.md against the code: every client message type the reader takes, every
/// server message type, and every `ProtocolError.Code` appears in it as `` `name` ``, so a
/// new message or refusal cannot ship undocumented.
///
/// Server message types and error codes have no list in the code (`ServerMessage.type` is a
/// switch, the codes are static members), so they are read from their source files, which
/// the compiler holds complete: the switch is exhaustive, and every code is declared with
/// `Code(rawValue:)` in ProtocolError.swift.
@Suite("docs/PROTOCOL.md covers the protocol")
struct ProtocolDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func documented() throws -> String { try text("docs/PROTOCOL.md") }

    /// The names `pattern`'s first capture group finds in `text`.
    static func captures(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    static func undocumented(_ names: [String]) throws -> [String] {
        let doc = try documented()
        return names.filter { !doc.contains("`\($0)`") }
    }

    @Test func everyClientMessageTypeIsDocumented() throws {
        #expect(ClientMessage.typeNames.count >= 19)
        #expect(try Self.undocumented(ClientMessage.typeNames) == [])
    }

    @Test func everyServerMessageTypeIsDocumented() throws {
        let source = try Self.text("Sources/RetroRapidServer/WebSocket/ProtocolMessagesServer.swift")
        // The body of `var type: StaticString { switch self { … } }`, up to its closing brace.
        let start = try #require(source.range(of: "var type: StaticString {"))
        let body = source[start.upperBound...].prefix { $0 != "}" }
        let types = try Self.captures(#"case \.\w+: "(\w+)""#, in: String(body))
        #expect(types.count >= 29 && types.contains("welcome") && types.contains("ghost"), "read \(types)")
        #expect(try Self.undocumented(types) == [])
    }

    @Test func everyErrorCodeIsDocumented() throws {
        let source = try Self.text("Sources/RetroRapidServer/WebSocket/ProtocolError.swift")
        let codes = try Self.captures(#"static let \w+ = Code\(rawValue: "(\w+)"\)"#, in: source)
        #expect(codes.count >= 48 && codes.contains("bad_json") && codes.contains("idle_timeout"), "read \(codes)")
        #expect(try Self.undocumented(codes) == [])
    }
}
