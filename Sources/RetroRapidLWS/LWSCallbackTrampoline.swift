import CLibWebSockets

/// A protocol's callback in Swift terms: the owner given with the protocol (unretained), the
/// connection, the reason, the connection's per-session memory (`user`), and the reason's
/// input. Returns what libwebsockets wants back (0 to go on, -1 to close, 1 where a reason
/// says "answered").
public typealias LWSProtocolCallback = (_ owner: UnsafeMutableRawPointer, _ connection: LWSConnection,
                                        _ reason: LWSCallbackReason, _ user: UnsafeMutableRawPointer?,
                                        _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32

/// What libwebsockets' `user` pointers lead to: a protocol's Swift callback and its owner.
/// Kept by the `LWSNativeContext` for its whole life.
final class LWSProtocolBox {
    let callback: LWSProtocolCallback
    let owner: UnsafeMutableRawPointer?

    init(callback: @escaping LWSProtocolCallback, owner: UnsafeMutableRawPointer?) {
        self.callback = callback
        self.owner = owner
    }
}

/// The C functions libwebsockets calls, which hand each callback to its Swift
/// `LWSProtocolCallback`.
///
/// Threading rule: libwebsockets calls them on the context's service thread only (from
/// `lws_service` or the libev loop, and from `lws_context_destroy` for the last closes).
///
/// protocols[0] finds its box through the context's user pointer rather than the protocol's:
/// libwebsockets gives protocols[0] reasons for connections bound to other protocols (the
/// WSI_DESTROY of a WebSocket), where `lws_get_protocol` names the other one. Every other
/// protocol finds its box through `lws_get_protocol(wsi)->user`. No owner: the reason is
/// ignored (0), as for a callback without a connection.
enum LWSCallbackTrampoline {
    static let firstProtocol: @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
                                               UnsafeMutableRawPointer?, Int) -> Int32 = { wsi, reason, user, input, length in
        guard let wsi, let box = lws_context_user(lws_get_context(wsi)) else { return 0 }
        return dispatch(box, wsi, reason, user, input, length)
    }

    static let laterProtocol: @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
                                               UnsafeMutableRawPointer?, Int) -> Int32 = { wsi, reason, user, input, length in
        guard let wsi, let box = lws_get_protocol(wsi)?.pointee.user else { return 0 }
        return dispatch(box, wsi, reason, user, input, length)
    }

    @inline(__always)
    private static func dispatch(_ box: UnsafeMutableRawPointer, _ wsi: OpaquePointer, _ reason: lws_callback_reasons,
                                 _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                                 _ length: Int) -> Int32 {
        Unmanaged<LWSProtocolBox>.fromOpaque(box)._withUnsafeGuaranteedRef { box in
            guard let owner = box.owner else { return 0 }
            return box.callback(owner, LWSConnection(wsi), LWSCallbackReason(rawValue: reason.rawValue), user, input, length)
        }
    }

    /// The owner behind a protocol's `user` pointer (one of our boxes).
    static func owner(ofProtocolUser user: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        Unmanaged<LWSProtocolBox>.fromOpaque(user).takeUnretainedValue().owner
    }
}
