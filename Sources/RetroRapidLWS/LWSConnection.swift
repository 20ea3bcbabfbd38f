#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets
import RetroRapidSupport

/// One libwebsockets connection (`struct lws *`) and the operations the server and the load
/// generator use on it: writes with LWS_PRE headroom, WRITEABLE requests, timeouts, close
/// reasons, the peer's address, the request's headers and the HTTP response head.
///
/// Threading rule: service thread only, and only while libwebsockets says the connection
/// exists (from its first callback to WSI_DESTROY or CLOSED): the handle is the bare pointer
/// and keeps nothing alive. The calls on the hot path (a step frame written to every
/// connection, a move read) are `@inlinable`, so they cost what the C call costs.
public struct LWSConnection: Hashable, @unchecked Sendable {
    // @unchecked: the pointer is only dereferenced by libwebsockets, on the service thread.
    @usableFromInline let wsi: OpaquePointer

    @inlinable public init(_ wsi: OpaquePointer) { self.wsi = wsi }

    /// Bytes libwebsockets needs free before every payload handed to `write` (LWS_PRE).
    @inlinable public static var headroom: Int { Int(rr_lws_pre) }

    // MARK: - Writing

    /// What a `write` sends.
    public enum WriteKind: Sendable {
        case text, ping, http, httpFinal, httpHeaders

        @inlinable var value: lws_write_protocol {
            switch self {
            case .text: LWS_WRITE_TEXT
            case .ping: LWS_WRITE_PING
            case .http: LWS_WRITE_HTTP  // LWS_WRITE_RAW is this, as a macro
            case .httpFinal: LWS_WRITE_HTTP_FINAL
            case .httpHeaders: LWS_WRITE_HTTP_HEADERS
            }
        }
    }

    /// One `lws_write` of `count` bytes at `payload`, which must have `headroom` writable bytes
    /// before it. Returns what libwebsockets returns (negative: the connection failed).
    @inlinable public func write(_ payload: UnsafeMutablePointer<UInt8>, count: Int, _ kind: WriteKind) -> Int {
        Int(lws_write(wsi, payload, count, kind.value))
    }

    /// `write` for bytes without headroom of their own: copies them after a new headroom.
    public func write(copying bytes: [UInt8], _ kind: WriteKind) -> Int {
        var buffer = [UInt8](repeating: 0, count: Self.headroom) + bytes
        let count = bytes.count
        return buffer.withUnsafeMutableBufferPointer { write($0.baseAddress! + Self.headroom, count: count, kind) }
    }

    /// Asks for a WRITEABLE callback (`lws_callback_on_writable`).
    @inlinable public func requestWriteable() {
        lws_callback_on_writable(wsi)
    }

    /// The last write is not all out yet (`lws_partial_buffered`): no other write may start
    /// outside WRITEABLE.
    @inlinable public var isPartiallyBuffered: Bool { lws_partial_buffered(wsi) != 0 }

    /// The bytes the peer's HTTP/2 flow-control window has room for; -1 on HTTP/1.x.
    public var peerWriteAllowance: Int { Int(lws_get_peer_write_allowance(wsi)) }

    // MARK: - Timeouts and closing

    /// libwebsockets closes the connection if it is still open in `seconds`.
    @inlinable public func setTimeout(seconds: Int32) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, seconds)
    }

    public func clearTimeout() {
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
    }

    /// Asks libwebsockets to close the connection on its next turn (from outside a callback of
    /// the connection, where returning -1 is not possible).
    @inlinable public func closeOnNextTurn() {
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }

    /// The status and reason of the close frame libwebsockets sends when the callback returns
    /// -1; the reason is cut to the 123 bytes a close frame has room for.
    public func setCloseReason(code: Int, reason: String) {
        var bytes = Array(reason.utf8.prefix(123))
        lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
    }

    /// Ends an HTTP transaction, leaving a keep-alive connection ready for its next request;
    /// false when the connection must close.
    public func completeHTTPTransaction() -> Bool {
        lws_http_transaction_completed(wsi) == 0
    }

    // MARK: - The connection itself

    /// The connection that owns the socket: itself, or for an HTTP/2 stream its connection.
    public var networkConnection: LWSConnection { LWSConnection(lws_get_network_wsi(wsi) ?? wsi) }

    /// The connection has its own socket (not a stream inside an HTTP/2 connection).
    public var hasOwnSocket: Bool { lws_get_network_wsi(wsi) == wsi }

    /// The socket's file descriptor; negative when there is none (yet, or any more).
    public var socketDescriptor: Int32 { lws_get_socket_fd(wsi) }

    public var isTLS: Bool { lws_is_ssl(wsi) != 0 }

    /// The `lws_context *`, for `TickScheduler.attach` (from LWS_CALLBACK_PROTOCOL_INIT).
    public var contextPointer: OpaquePointer { lws_get_context(wsi) }

    /// What `LWSNativeContext.connect` stored with a client connection.
    @inlinable public var opaqueUserData: Int { Int(bitPattern: lws_get_opaque_user_data(wsi)) }

    /// A pointer kept in the connection itself (`lws_set_opaque_user_data`: libwebsockets
    /// never reads it; nil until set): what a protocol finds its own object of the connection
    /// by, without per-session memory, which libwebsockets allocates for every connection.
    @inlinable public var userPointer: UnsafeMutableRawPointer? {
        get { lws_get_opaque_user_data(wsi) }
        nonmutating set { lws_set_opaque_user_data(wsi, newValue) }
    }

    /// The owner given with the protocol named `name` on this connection's vhost, if any.
    public func owner(ofProtocolNamed name: String) -> UnsafeMutableRawPointer? {
        guard let user = lws_vhost_name_to_protocol(lws_get_vhost(wsi), name)?.pointee.user else { return nil }
        return LWSCallbackTrampoline.owner(ofProtocolUser: user)
    }

    /// The peer's numeric address as libwebsockets reports it ("127.0.0.1", "::1",
    /// "::ffff:192.0.2.1" for an IPv4 client of an IPv6 socket), or nil when it cannot tell.
    /// `canonical` spells it as `IPAddress.canonical` does (the mapped form becomes the IPv4
    /// address), so one client has one address whichever way it came.
    public func peerAddress(canonical: Bool = false) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return nil }
        let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return canonical ? IPAddress.canonical(address) ?? address : address
    }

    // MARK: - WebSocket frames (RECEIVE)

    @inlinable public var isBinaryFrame: Bool { lws_frame_is_binary(wsi) != 0 }
    @inlinable public var isFinalFragment: Bool { lws_is_final_fragment(wsi) != 0 }
    /// What is still to come of the frame being received: the peer's own length field, any
    /// value below 2^63, so kept unsigned (converting it to `Int` could trap).
    @inlinable public var remainingPacketPayload: UInt { UInt(lws_remaining_packet_payload(wsi)) }

    // MARK: - The request's head

    /// A request header libwebsockets knows by name (`enum lws_token_indexes`).
    public struct Header: Hashable, Sendable {
        @usableFromInline let token: lws_token_indexes

        init(_ token: lws_token_indexes) { self.token = token }

        public static let authorization = Header(WSI_TOKEN_HTTP_AUTHORIZATION)
        public static let contentType = Header(WSI_TOKEN_HTTP_CONTENT_TYPE)
        public static let contentLength = Header(WSI_TOKEN_HTTP_CONTENT_LENGTH)
        public static let transferEncoding = Header(WSI_TOKEN_HTTP_TRANSFER_ENCODING)
        public static let ifMatch = Header(WSI_TOKEN_HTTP_IF_MATCH)
        public static let forwardedFor = Header(WSI_TOKEN_X_FORWARDED_FOR)
        public static let host = Header(WSI_TOKEN_HOST)
        public static let origin = Header(WSI_TOKEN_ORIGIN)
        public static let cookie = Header(WSI_TOKEN_HTTP_COOKIE)
        /// Sec-WebSocket-Protocol.
        public static let webSocketProtocol = Header(WSI_TOKEN_PROTOCOL)
        /// The request line's path (a GET's); `uriArguments` holds the query.
        public static let getURI = Header(WSI_TOKEN_GET_URI)
        /// The query, split at '&' and ';' and percent-decoded, one fragment per piece.
        public static let uriArguments = Header(WSI_TOKEN_HTTP_URI_ARGS)
        /// The request line's version ("HTTP/1.1"), HTTP/1 only.
        public static let httpVersion = Header(WSI_TOKEN_HTTP)
        /// HTTP/2 pseudo-headers.
        public static let method = Header(WSI_TOKEN_HTTP_COLON_METHOD)
        public static let path = Header(WSI_TOKEN_HTTP_COLON_PATH)
        public static let authority = Header(WSI_TOKEN_HTTP_COLON_AUTHORITY)

        /// Tokens that hold the request line (method and path, query, version), not fields.
        static let requestLine: Set<UInt32> = [
            WSI_TOKEN_GET_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_OPTIONS_URI, WSI_TOKEN_PUT_URI, WSI_TOKEN_PATCH_URI,
            WSI_TOKEN_DELETE_URI, WSI_TOKEN_CONNECT, WSI_TOKEN_HEAD_URI, WSI_TOKEN_HTTP, WSI_TOKEN_HTTP_URI_ARGS,
            WSI_TOKEN_HTTP_COLON_PATH, WSI_TOKEN_HTTP_COLON_METHOD,
        ].reduce(into: []) { $0.insert($1.rawValue) }
    }

    /// A header's whole value (a repeated header's values joined by libwebsockets), or nil when
    /// absent or sent empty (libwebsockets gives an empty header length 0).
    public func header(_ header: Header) -> String? {
        let length = headerLength(header)
        guard length > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &bytes, Int32(bytes.count), header.token) >= 0 else { return nil }
        return String(decoding: bytes.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The header's length as libwebsockets keeps it (0 when absent or empty).
    public func headerLength(_ header: Header) -> Int {
        Int(lws_hdr_total_length(wsi, header.token))
    }

    /// The header was sent with an empty value: only `lws_hdr_copy_fragment` tells an empty one
    /// (0) from a missing one (-1).
    public func headerIsPresentAndEmpty(_ header: Header) -> Bool {
        var terminator: CChar = 0
        return lws_hdr_copy_fragment(wsi, &terminator, 1, header.token, 0) == 0
    }

    /// The header's fragments (the query's pieces, for `uriArguments`), each copied at its
    /// exact size; an empty fragment is kept.
    public func headerFragments(_ header: Header) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, header.token, index))
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), header.token, index)
            guard copied >= 0 else { break }
            pieces.append(buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) })
            index += 1
        }
        return pieces
    }

    /// A header libwebsockets has no token for. It keeps those by name, lower-cased, with the
    /// colon.
    public func customHeader(_ name: String) -> String? {
        let key = name.lowercased() + ":"
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
        guard length > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &bytes, Int32(bytes.count), key, Int32(key.utf8.count)) >= 0 else { return nil }
        return String(decoding: bytes.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The header fields' names and values in bytes: every field libwebsockets knows by name,
    /// and the unknown ones in `customNames` (lower-case). libwebsockets 4.1.6 cannot list the
    /// other unknown ones.
    public func headerFieldBytes(customNames: some Sequence<String>) -> Int {
        var total = 0
        for index in 0..<WSI_TOKEN_COUNT.rawValue {
            if Header.requestLine.contains(index) { continue }
            let token = lws_token_indexes(rawValue: index)
            let length = Int(lws_hdr_total_length(wsi, token))
            guard length > 0 else { continue }
            total += length + (lws_token_to_string(token).map { strlen($0) } ?? 0)
        }
        for name in customNames {
            let key = name + ":"
            let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
            if length > 0 { total += length + key.utf8.count }
        }
        return total
    }

    /// The request method as libwebsockets parsed it.
    public enum RequestMethod: Sendable {
        case get, post, options, put, patch, delete, head
        /// HTTP/2: the method is in the `:method` header.
        case http2
        /// One libwebsockets knows but this server takes no request of (CONNECT).
        case other
    }

    /// The request's method and path (the URI before the query, as sent), or nil when
    /// libwebsockets has none. The bytes live as long as the request's head.
    public func requestTarget() -> (method: RequestMethod, uri: UnsafeRawBufferPointer)? {
        var uri: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        let method = Int(lws_http_get_uri_and_method(wsi, &uri, &length))
        guard method >= 0, let uri else { return nil }
        let kind: RequestMethod = switch method {
        case Int(LWSHUMETH_GET): .get
        case Int(LWSHUMETH_POST): .post
        case Int(LWSHUMETH_OPTIONS): .options
        case Int(LWSHUMETH_PUT): .put
        case Int(LWSHUMETH_PATCH): .patch
        case Int(LWSHUMETH_DELETE): .delete
        case Int(LWSHUMETH_HEAD): .head
        case Int(LWSHUMETH_COLON_PATH): .http2
        default: .other
        }
        return (kind, UnsafeRawBufferPointer(start: uri, count: Int(length)))
    }

    // MARK: - The response's head

    /// Writes an HTTP response head: the status line and common headers libwebsockets adds
    /// (with the vhost's own headers), then `headers` in order. False when it did not fit or
    /// the connection failed.
    public func writeHTTPHead(status: Int, contentType: String, contentLength: Int,
                              headers: [(name: String, value: String)]) -> Bool {
        let space = 1024 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        var buffer = [UInt8](repeating: 0, count: Self.headroom + space)
        return buffer.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + Self.headroom
            let end = buffer.baseAddress! + buffer.count
            var p: UnsafeMutablePointer<UInt8>? = start
            guard lws_add_http_common_headers(wsi, UInt32(status), contentType,
                                              lws_filepos_t(contentLength), &p, end) == 0 else {
                return false
            }
            for header in headers {
                var name = Array((header.name + ":").utf8) + [0]
                var value = Array(header.value.utf8)
                guard lws_add_http_header_by_name(wsi, &name, &value, Int32(value.count), &p, end) == 0 else {
                    return false
                }
            }
            return lws_finalize_write_http_header(wsi, start, &p, end) == 0
        }
    }

    /// libwebsockets' own HTTP handling (`lws_callback_http_dummy`): files, keep-alive
    /// bookkeeping, everything a protocols[0] callback does not answer itself.
    public func defaultHTTPCallback(_ reason: LWSCallbackReason, user: UnsafeMutableRawPointer?,
                                    input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        lws_callback_http_dummy(wsi, lws_callback_reasons(rawValue: reason.rawValue), user, input, length)
    }
}
