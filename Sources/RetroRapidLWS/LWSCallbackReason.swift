import CLibWebSockets

/// Why libwebsockets called a protocol's callback (`enum lws_callback_reasons`), named for Swift
/// so the server and the load generator switch on reasons without importing the C module.
/// Only the reasons our callbacks act on are named; every other one passes through as its raw
/// value. `@inlinable`: the reasons are compared in every callback, the hot path included.
public struct LWSCallbackReason: RawRepresentable, Equatable, Sendable {
    public var rawValue: UInt32

    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable init(_ reason: lws_callback_reasons) { rawValue = reason.rawValue }

    // Context and protocol lifetime.
    @inlinable public static var eventWaitCancelled: Self { Self(LWS_CALLBACK_EVENT_WAIT_CANCELLED) }
    @inlinable public static var protocolInit: Self { Self(LWS_CALLBACK_PROTOCOL_INIT) }
    @inlinable public static var protocolDestroy: Self { Self(LWS_CALLBACK_PROTOCOL_DESTROY) }
    // Every connection.
    @inlinable public static var filterNetworkConnection: Self { Self(LWS_CALLBACK_FILTER_NETWORK_CONNECTION) }
    @inlinable public static var wsiCreate: Self { Self(LWS_CALLBACK_WSI_CREATE) }
    @inlinable public static var serverNewClientInstantiated: Self { Self(LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED) }
    @inlinable public static var wsiDestroy: Self { Self(LWS_CALLBACK_WSI_DESTROY) }
    // HTTP.
    @inlinable public static var filterHTTPConnection: Self { Self(LWS_CALLBACK_FILTER_HTTP_CONNECTION) }
    @inlinable public static var httpFileCompletion: Self { Self(LWS_CALLBACK_HTTP_FILE_COMPLETION) }
    @inlinable public static var http: Self { Self(LWS_CALLBACK_HTTP) }
    @inlinable public static var httpBody: Self { Self(LWS_CALLBACK_HTTP_BODY) }
    @inlinable public static var httpBodyCompletion: Self { Self(LWS_CALLBACK_HTTP_BODY_COMPLETION) }
    @inlinable public static var httpWriteable: Self { Self(LWS_CALLBACK_HTTP_WRITEABLE) }
    @inlinable public static var httpDropProtocol: Self { Self(LWS_CALLBACK_HTTP_DROP_PROTOCOL) }
    @inlinable public static var closedHTTP: Self { Self(LWS_CALLBACK_CLOSED_HTTP) }
    @inlinable public static var httpConfirmUpgrade: Self { Self(LWS_CALLBACK_HTTP_CONFIRM_UPGRADE) }
    // A request line libwebsockets could not take as HTTP (the raw-skt fallback).
    @inlinable public static var rawAdopt: Self { Self(LWS_CALLBACK_RAW_ADOPT) }
    @inlinable public static var rawRX: Self { Self(LWS_CALLBACK_RAW_RX) }
    // WebSocket server side.
    @inlinable public static var established: Self { Self(LWS_CALLBACK_ESTABLISHED) }
    @inlinable public static var receive: Self { Self(LWS_CALLBACK_RECEIVE) }
    @inlinable public static var receivePong: Self { Self(LWS_CALLBACK_RECEIVE_PONG) }
    @inlinable public static var serverWriteable: Self { Self(LWS_CALLBACK_SERVER_WRITEABLE) }
    @inlinable public static var peerInitiatedClose: Self { Self(LWS_CALLBACK_WS_PEER_INITIATED_CLOSE) }
    @inlinable public static var closed: Self { Self(LWS_CALLBACK_CLOSED) }
    // WebSocket client side (the load generator).
    @inlinable public static var clientEstablished: Self { Self(LWS_CALLBACK_CLIENT_ESTABLISHED) }
    @inlinable public static var clientReceive: Self { Self(LWS_CALLBACK_CLIENT_RECEIVE) }
    @inlinable public static var clientWriteable: Self { Self(LWS_CALLBACK_CLIENT_WRITEABLE) }
    @inlinable public static var clientConnectionError: Self { Self(LWS_CALLBACK_CLIENT_CONNECTION_ERROR) }
    @inlinable public static var clientClosed: Self { Self(LWS_CALLBACK_CLIENT_CLOSED) }
}
