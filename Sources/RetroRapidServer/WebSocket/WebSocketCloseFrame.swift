/// A client's close frame checked against RFC 6455 where libwebsockets 4.1.6 does not check it.
///
/// libwebsockets echoes a client's close payload back as its answer (lib/roles/ws/ops-ws.c):
/// it turns the reserved codes below 3000 into 1002 itself, but echoes a 1-byte payload (no
/// valid code at all), codes from 5000 up, and a reason that is not UTF-8 as they came. It
/// also turns 1012–1014 into 1002, though a peer may send them, and does so in the payload
/// before this sees it: those cannot be echoed (docs/PROTOCOL.md, "Frames"). The
/// protocol callback sees the payload first (LWS_CALLBACK_WS_PEER_INITIATED_CLOSE) and, for a
/// frame refused here, closes with the returned status instead (docs/PROTOCOL.md). Pure.
enum WebSocketCloseFrame {
    /// RFC 6455 §7.4.1: the endpoint received a frame that breaks the protocol.
    static let protocolError: UInt16 = 1002
    /// RFC 6455 §7.4.1: data inconsistent with its type (a reason that is not UTF-8).
    static let invalidPayload: UInt16 = 1007

    /// What to close with instead of echoing `payload`, or nil when it is a valid close
    /// payload: empty, or a 2-byte status a peer may send followed by a UTF-8 reason.
    static func refusal(of payload: UnsafeRawBufferPointer) -> ProtocolError.Close? {
        if payload.isEmpty { return nil }
        guard payload.count >= 2 else {
            return .init(code: protocolError, reason: "protocol error: a close frame of 1 byte (a status takes 2)")
        }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard mayBeSent(code) else {
            return .init(code: protocolError, reason: "protocol error: close status \(code) may not be sent")
        }
        guard String(validating: payload.dropFirst(2), as: UTF8.self) != nil else {
            return .init(code: invalidPayload, reason: "invalid close reason: not UTF-8")
        }
        return nil
    }

    /// The statuses a peer may put in a close frame (RFC 6455 §7.4.1–7.4.2 and IANA's
    /// registry): 1000–1003 and 1007–1014 defined, 3000–4999 for libraries and applications.
    /// 1004–1006 and 1015 are reserved or only reported locally; the rest is unassigned.
    static func mayBeSent(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
