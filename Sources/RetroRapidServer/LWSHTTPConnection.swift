#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets

/// The protocol callback for every HTTP connection of the vhost. Requests on callback mounts
/// go to `LWSContextOptions.httpHandler`; everything else (static files, keep-alive
/// bookkeeping) goes on to libwebsockets' own `lws_callback_http_dummy`.
///
/// Threading rule: runs on the service thread; owns the connection's `HTTPExchange` (the one
/// pointer in the connection's `user` memory) and `LWSContext.openExchangeCount`; never blocks:
/// handlers answer from memory, and anything slow must go to another thread and come back
/// through `lws_cancel_service`.
func lwsHTTPCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
                     _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                     _ length: Int) -> Int32 {
    guard let wsi else { return 0 }
    switch reason {
    case LWS_CALLBACK_HTTP:
        guard let connection = LWSHTTPConnection(wsi, user) else { return -1 }
        return connection.begin()
    case LWS_CALLBACK_HTTP_BODY:
        if let connection = LWSHTTPConnection(wsi, user), let exchange = connection.exchange {
            return connection.receiveBody(exchange, input, length)
        }
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if let connection = LWSHTTPConnection(wsi, user), let exchange = connection.exchange {
            return connection.bodyComplete(exchange)
        }
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if let connection = LWSHTTPConnection(wsi, user), let exchange = connection.exchange {
            return connection.writeNext(exchange)
        }
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL, LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_WSI_DESTROY:
        // A connection that ends mid-exchange. WSI_DESTROY is the last word on every connection
        // and comes to protocols[0] (ours) with `user` still intact.
        LWSHTTPConnection(wsi, user)?.releaseExchange()
    default:
        break
    }
    return lws_callback_http_dummy(wsi, reason, user, input, length)
}

/// One request and its response on one connection, kept in the connection's `user` memory
/// from LWS_CALLBACK_HTTP until the response is written (at once, unless a body must come in
/// first or an HTTP/2 response goes out in pieces) or the connection ends.
///
/// It must be gone before `lws_http_transaction_completed`: for a request that reached us as a
/// file mount's miss, that call frees and replaces `user` without any callback first.
final class HTTPExchange {
    var request: HTTPRequest
    /// The request announced a body (Content-Length > 0); the handler runs once it is all in.
    var expectsBody: Bool
    var responseStarted = false
    var closesAfterResponse = false
    /// The response body still to send from `sendOffset`.
    var pendingBody: [UInt8] = []
    var sendOffset = 0
    var sending = false

    init(request: HTTPRequest, expectsBody: Bool) {
        self.request = request
        self.expectsBody = expectsBody
    }
}

/// The view of one `struct lws *` that the callback works through.
private struct LWSHTTPConnection {
    let wsi: OpaquePointer
    /// The connection's `user` memory: one pointer, zero until an exchange is stored.
    let slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let context: LWSContext

    /// HTTP/2's default SETTINGS_MAX_FRAME_SIZE: libwebsockets sends one lws_write as one DATA
    /// frame, so no write may be larger. The buffers need not outlive lws_write: libwebsockets
    /// copies what the socket does not take (lws_issue_raw into buflist_out).
    static let http2FrameSize = 16 * 1024

    init?(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) {
        guard let user, let owner = lws_context_user(lws_get_context(wsi)) else { return nil }
        self.wsi = wsi
        self.slot = user.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        self.context = Unmanaged<LWSContext>.fromOpaque(owner).takeUnretainedValue()
    }

    var exchange: HTTPExchange? {
        slot.pointee.map { Unmanaged<HTTPExchange>.fromOpaque($0).takeUnretainedValue() }
    }

    func store(_ exchange: HTTPExchange) {
        releaseExchange()
        slot.pointee = Unmanaged.passRetained(exchange).toOpaque()
        context.openExchangeCount += 1
    }

    func releaseExchange() {
        guard let pointer = slot.pointee else { return }
        Unmanaged<HTTPExchange>.fromOpaque(pointer).release()
        slot.pointee = nil
        context.openExchangeCount -= 1
    }

    // MARK: - Request

    /// LWS_CALLBACK_HTTP: the headers are in. Answers now, or waits for the body.
    func begin() -> Int32 {
        guard let (method, path) = requestLine() else {
            let exchange = HTTPExchange(request: HTTPRequest(method: .get, path: "/"), expectsBody: false)
            exchange.closesAfterResponse = true
            store(exchange)
            return respond(exchange, .error(status: 405, code: "method_not_allowed",
                                            message: "This server does not handle that request method."))
        }
        let bodyLength = contentLength()
        let exchange = HTTPExchange(request: HTTPRequest(method: method, path: path),
                                    expectsBody: bodyLength > 0)
        store(exchange)
        if bodyLength > HTTPRequest.maximumBodySize {
            exchange.closesAfterResponse = true
            return respond(exchange, .error(
                status: 413, code: "payload_too_large",
                message: "The request body is \(bodyLength) bytes; the limit is \(HTTPRequest.maximumBodySize)."))
        }
        if exchange.expectsBody { return 0 }
        return respond(exchange, context.options.httpHandler(exchange.request))
    }

    /// LWS_CALLBACK_HTTP_BODY: one piece of the body.
    func receiveBody(_ exchange: HTTPExchange, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard exchange.expectsBody, !exchange.responseStarted else { return 0 }  // refused: discard
        guard exchange.request.body.count + length <= HTTPRequest.maximumBodySize else { return -1 }
        if let input, length > 0 {
            exchange.request.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        return 0
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION: the whole body is in; now the handler runs.
    func bodyComplete(_ exchange: HTTPExchange) -> Int32 {
        guard exchange.expectsBody, !exchange.responseStarted else { return 0 }
        return respond(exchange, context.options.httpHandler(exchange.request))
    }

    private func requestLine() -> (HTTPMethod, String)? {
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let lwsMethod = Int(lws_http_get_uri_and_method(wsi, &uri, &uriLength))
        guard lwsMethod >= 0, let uri else { return nil }
        let method: HTTPMethod?
        switch lwsMethod {
        case Int(LWSHUMETH_GET): method = .get
        case Int(LWSHUMETH_POST): method = .post
        case Int(LWSHUMETH_OPTIONS): method = .options
        case Int(LWSHUMETH_PUT): method = .put
        case Int(LWSHUMETH_PATCH): method = .patch
        case Int(LWSHUMETH_DELETE): method = .delete
        case Int(LWSHUMETH_HEAD): method = .head
        case Int(LWSHUMETH_COLON_PATH): method = header(WSI_TOKEN_HTTP_COLON_METHOD).flatMap(HTTPMethod.init(rawValue:))
        default: method = nil
        }
        guard let method else { return nil }
        let path = String(decoding: UnsafeRawBufferPointer(start: uri, count: Int(uriLength)), as: UTF8.self)
        return (method, path)
    }

    private func contentLength() -> Int {
        header(WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0) } ?? 0
    }

    private func header(_ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &bytes, Int32(bytes.count), token) >= 0 else { return nil }
        return String(decoding: bytes.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Response

    /// Writes the response. Over HTTP/1.1 the connection then closes (`connection: close`):
    /// libwebsockets 4.1.6 mishandles a request pipelined behind one answered by a callback.
    /// Completed in WRITEABLE, the next request is parsed in the middle of this one and the
    /// connection hangs; completed here, a pipelined POST body sends the service thread into a
    /// busy loop that never returns (found by the tests; newer libwebsockets fixed both). One
    /// connection per API call costs little: the game itself runs over a WebSocket, and static
    /// files, which libwebsockets serves itself, keep keep-alive.
    ///
    /// HTTP/1.1: the whole body in one lws_write, in this callback; libwebsockets keeps what the
    /// socket does not take and flushes it before closing. HTTP/2 (no pipelining): pieces no
    /// larger than a frame and the peer's window, one per WRITEABLE, then the stream ends.
    private func respond(_ exchange: HTTPExchange, _ response: HTTPResponse) -> Int32 {
        exchange.responseStarted = true
        var response = response
        if lws_get_peer_write_allowance(wsi) < 0 {  // -1: HTTP/1.x, no flow-control window
            exchange.closesAfterResponse = true
            response.headers.append(HTTPHeader("connection", "close"))
        }
        guard writeHeaders(response) else { return -1 }
        exchange.pendingBody = exchange.request.method == .head ? [] : response.body
        exchange.sendOffset = 0
        exchange.sending = true
        return writeNext(exchange)
    }

    private func writeHeaders(_ response: HTTPResponse) -> Bool {
        let headerSpace = 1024 + response.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        var buffer = [UInt8](repeating: 0, count: Int(rr_lws_pre) + headerSpace)
        return buffer.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + Int(rr_lws_pre)
            let end = buffer.baseAddress! + buffer.count
            var p: UnsafeMutablePointer<UInt8>? = start
            guard lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType,
                                              lws_filepos_t(response.body.count), &p, end) == 0 else {
                return false
            }
            for header in response.headers {
                var name = Array((header.name + ":").utf8) + [0]
                var value = Array(header.value.utf8)
                guard lws_add_http_header_by_name(wsi, &name, &value, Int32(value.count), &p, end) == 0 else {
                    return false
                }
            }
            return lws_finalize_write_http_header(wsi, start, &p, end) == 0
        }
    }

    /// Writes the rest of the body, or on HTTP/2 as much of it as one frame and the peer's
    /// window allow (asking for WRITEABLE to continue). The last write ends the transaction,
    /// which leaves a keep-alive connection ready for its next request.
    func writeNext(_ exchange: HTTPExchange) -> Int32 {
        guard exchange.sending else { return 0 }
        let remaining = exchange.pendingBody.count - exchange.sendOffset
        var count = remaining
        // -1 on HTTP/1; on HTTP/2 the bytes the peer's flow-control window has room for.
        let allowance = Int(lws_get_peer_write_allowance(wsi))
        if allowance >= 0 {
            count = min(count, Self.http2FrameSize, allowance)
            if count == 0 && remaining > 0 {
                lws_callback_on_writable(wsi)  // called again when the window opens
                return 0
            }
        }
        let isFinal = count == remaining
        var buffer = [UInt8](repeating: 0, count: Int(rr_lws_pre) + count)
        buffer.replaceSubrange(Int(rr_lws_pre)..., with: exchange.pendingBody[exchange.sendOffset..<exchange.sendOffset + count])
        let written = buffer.withUnsafeMutableBufferPointer { buffer in
            lws_write(wsi, buffer.baseAddress! + Int(rr_lws_pre), count,
                      isFinal ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
        }
        guard written >= 0 else { return -1 }
        exchange.sendOffset += count
        guard isFinal else {
            lws_callback_on_writable(wsi)
            return 0
        }
        let closes = exchange.closesAfterResponse
        releaseExchange()
        if closes { return -1 }
        return lws_http_transaction_completed(wsi) == 0 ? 0 : -1
    }
}
