import Testing
@testable import RetroRapidServer

/// The close-frame rules the protocol callback adds to libwebsockets' (RFC 6455 §5.5.1, §7.4).
@Suite("WebSocket close frame")
struct WebSocketCloseFrameTests {
    func refusal(_ bytes: [UInt8]) -> ProtocolError.Close? {
        bytes.withUnsafeBytes { WebSocketCloseFrame.refusal(of: $0) }
    }

    func frame(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
    }

    @Test func validFramesAreEchoed() {
        #expect(refusal([]) == nil)
        for code: UInt16 in [1000, 1001, 1003, 1007, 1011, 1014, 3000, 4401, 4999] {
            #expect(refusal(frame(code)) == nil, "\(code)")
        }
        #expect(refusal(frame(1000, Array("au revoir, à bientôt".utf8))) == nil)
    }

    @Test func oneByteIsAProtocolError() {
        #expect(refusal([0x03])?.code == 1002)
    }

    @Test func statusesNoPeerMaySendAreProtocolErrors() {
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            #expect(refusal(frame(code))?.code == 1002, "\(code)")
        }
    }

    @Test func aReasonThatIsNotUTF8IsInvalidPayload() {
        #expect(refusal(frame(1000, [0xFF]))?.code == 1007)
        #expect(refusal(frame(1000, [0xC3]))?.code == 1007)  // half of "é"
        #expect(refusal(frame(1000, [0xED, 0xA0, 0x80]))?.code == 1007)  // a surrogate
    }

    @Test func everyReasonFitsInAControlFrame() {
        for payload in [[0x03], frame(65535), frame(1000, [0xFF])] {
            #expect((refusal(payload)?.reason.utf8.count ?? 0) <= 123)
        }
    }
}
