#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets
import RetroRapidSupport
import RetroRapidLWS

/// The callback of `protocols[0]`: every HTTP connection of the vhost, and the context-wide
/// reasons libwebsockets gives only to the first protocol. Every request's head is first held
/// to `HTTPRequestLimits` and the framing rules (`admit`), files and routes alike; requests on
/// callback mounts then go to `LWSContextOptions.httpHandler`; everything else (static files,
/// keep-alive bookkeeping) goes on to libwebsockets' own `lws_callback_http_dummy`.
///
/// Threading rule: runs on the service thread, like every libwebsockets callback. It owns the
/// context's table of live HTTP exchanges and never blocks: a handler answers from memory or
/// hands the slow part (SQLite) to the `DatabaseWorker`, whose completion comes back through the
/// `ServiceMailbox` (drained here, on LWS_CALLBACK_EVENT_WAIT_CANCELLED) and reaches the
/// connection only if the exchange's id is still in the table.
func lwsHTTPCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
                     _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                     _ length: Int) -> Int32 {
    guard let wsi, let owner = lws_context_user(lws_get_context(wsi)) else { return 0 }
    let context = Unmanaged<LWSContext>.fromOpaque(owner).takeUnretainedValue()
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        // Someone called lws_cancel_service: run what other threads posted. libwebsockets
        // gives this reason to every protocol; this one, protocols[0], is the one that drains.
        // (`wsi` is a stand-in with no connection behind it.)
        context.mailbox.drain()
        context.serviceWoken()
        return 0
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        // A new TCP connection, before anything is read: refused once shutdown has begun.
        return context.isAccepting ? 0 : -1
    case LWS_CALLBACK_WSI_CREATE:
        context.connectionOpened()
        context.connectionTracker.opened(wsi, now: MonotonicClock.now())
    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
        // The socket is attached now (not yet at WSI_CREATE); at the close it may be gone.
        context.connectionTracker.accepted(wsi, peer: LWSHTTPConnection(wsi: wsi, context: context).peerAddress())
    case LWS_CALLBACK_WSI_DESTROY:
        // The last word on every connection, whatever protocol it ended on (WebSockets too).
        context.releaseExchange(of: wsi)
        context.admittedRequests[wsi] = nil
        context.connectionTracker.closed(wsi)
        context.connectionClosed()
    case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
        // Every request's head once complete, files and routes alike, before either is served
        // (not WebSocket upgrades, which libwebsockets hands to CONFIRM_UPGRADE instead).
        return LWSHTTPConnection(wsi: wsi, context: context).admit()
    case LWS_CALLBACK_HTTP_FILE_COMPLETION:
        // A file went out whole: a next request on this connection starts its clock now.
        context.admittedRequests[wsi] = nil
        context.connectionTracker.requestEnded(wsi, now: MonotonicClock.now(), bytes: LWSHTTPConnection.byteCounts(wsi))
    case LWS_CALLBACK_RAW_ADOPT:
        return 0  // a request line libwebsockets could not take as HTTP; its bytes come next
    case LWS_CALLBACK_RAW_RX:
        return LWSHTTPConnection(wsi: wsi, context: context).refuseUnknownMethod(input, length)
    case LWS_CALLBACK_HTTP:
        return LWSHTTPConnection(wsi: wsi, context: context).begin()
    case LWS_CALLBACK_HTTP_BODY:
        if let exchange = context.exchange(of: wsi) {
            return LWSHTTPConnection(wsi: wsi, context: context).receiveBody(exchange, input, length)
        }
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if let exchange = context.exchange(of: wsi) {
            return LWSHTTPConnection(wsi: wsi, context: context).bodyComplete(exchange)
        }
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if let exchange = context.exchange(of: wsi) {
            return LWSHTTPConnection(wsi: wsi, context: context).writeable(exchange)
        }
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        // A connection that ends mid-exchange: a late answer must find nothing to write to.
        context.releaseExchange(of: wsi)
    case LWS_CALLBACK_CLOSED_HTTP:
        // The socket is still open here: a head libwebsockets dropped is logged, and answered
        // where the socket still takes an answer.
        LWSHTTPConnection(wsi: wsi, context: context).answerDroppedHead()
        // As above; and an HTTP/2 stream ends here, with no WSI_DESTROY of its own to count on.
        context.releaseExchange(of: wsi)
        context.admittedRequests[wsi] = nil
        context.connectionTracker.closed(wsi)
    default:
        break
    }
    return lws_callback_http_dummy(wsi, reason, user, input, length)
}

/// One request and its response on one connection, from LWS_CALLBACK_HTTP until the response
/// is written or the connection ends. The context keeps it in its table of live exchanges,
/// by `wsi` (for callbacks) and by `id` (for answers that come later, from other threads).
///
/// It must be gone before `lws_http_transaction_completed`, which, for a request that reached
/// us as a file mount's miss, frees and reuses the connection's state.
final class HTTPExchange {
    /// Never reused, so an answer for an exchange that ended cannot reach another one.
    let id: UInt64
    /// Valid while the exchange is in the context's table: removed there before libwebsockets
    /// frees the connection.
    let wsi: OpaquePointer
    var request: HTTPRequest
    /// The request announced a body (Content-Length > 0); the handler runs once it is all in.
    var expectsBody: Bool
    /// The handler is running now (inside the callback that called it): an answer it gives
    /// meanwhile is written when it returns, not through WRITEABLE.
    var handlerRunning = false
    /// An answer given and not yet written.
    var answer: HTTPResponse?
    var responseStarted = false
    var closesAfterResponse = false
    /// The response body still to send from `sendOffset`.
    var pendingBody: [UInt8] = []
    var sendOffset = 0
    var sending = false

    init(id: UInt64, wsi: OpaquePointer, request: HTTPRequest, expectsBody: Bool) {
        self.id = id
        self.wsi = wsi
        self.request = request
        self.expectsBody = expectsBody
    }
}

/// The view of one `struct lws *` that the callback works through.
private struct LWSHTTPConnection {
    let wsi: OpaquePointer
    let context: LWSContext

    /// HTTP/2's default SETTINGS_MAX_FRAME_SIZE: libwebsockets sends one lws_write as one DATA
    /// frame, so no write may be larger. The buffers need not outlive lws_write: libwebsockets
    /// copies what the socket does not take (lws_issue_raw into buflist_out).
    static let http2FrameSize = 16 * 1024

    /// How long a connection waits for an answer that comes later (a database job) before
    /// libwebsockets closes it: a job that never completes must not hold a socket for ever.
    static let answerTimeoutSeconds: Int32 = 30

    // MARK: - Request

    /// LWS_CALLBACK_FILTER_HTTP_CONNECTION: a request's head is complete. Refuses, with the
    /// API's JSON error, one that breaks a limit or the framing rules (`HTTPFraming`,
    /// `HTTPQueryParser`), and one from an address with too many connections open; what it
    /// admits goes on to the file mount or to `begin`.
    func admit() -> Int32 {
        context.admittedRequests[wsi] = nil
        context.connectionTracker.headArrived(wsi)
        let limits = context.options.requestLimits
        let peer = peerAddress()
        guard let (method, path) = requestLine() else {
            // Over HTTP/1 libwebsockets knows every method it lets through (the others come
            // to `refuseUnknownMethod`); over HTTP/2 `:method` may be anything.
            let name = header(WSI_TOKEN_HTTP_COLON_METHOD) ?? "?"
            return refuse(Self.unknownMethod(String(name.prefix(32))), method: nil, methodName: name,
                          path: header(WSI_TOKEN_HTTP_COLON_PATH) ?? "", peer: peer, forwardedFor: nil)
        }
        let headers = headers()
        let client = context.options.clientAddresses.clientAddress(peer: peer, forwardedFor: headers["x-forwarded-for"])
        let network = lws_get_network_wsi(wsi) ?? wsi
        guard context.connectionTracker.attribute(network, to: client) else {
            return refuse(APIError(status: 429, code: "too_many_connections",
                message: "Your address has \(limits.maxConnectionsPerIP) HTTP connections open, the most allowed; close one first."),
                method: method, methodName: method.rawValue, path: path, peer: peer,
                forwardedFor: headers["x-forwarded-for"])
        }
        let request: HTTPRequest
        let bodyLength: Int
        do throws(APIError) {
            bodyLength = try HTTPFraming.bodyLength(of: requestHead(path: path), limits: limits)
            request = HTTPRequest(method: method, path: path,
                                  queryItems: try HTTPQueryParser.items(fromPieces: queryPieces(), limits: limits),
                                  headers: headers, remoteAddress: peer)
        } catch {
            return refuse(error, method: method, methodName: method.rawValue, path: path, peer: peer,
                          forwardedFor: headers["x-forwarded-for"])
        }
        context.admittedRequests[wsi] = (request, bodyLength)
        return 0
    }

    /// LWS_CALLBACK_HTTP: a request `admit` let through reached a callback mount (a route, or a
    /// file that does not exist). Answers now, or waits for the body.
    func begin() -> Int32 {
        guard let (request, bodyLength) = context.admittedRequests.removeValue(forKey: wsi) else {
            // Not admitted: cannot happen (admit runs first for every request); refuse safely.
            let exchange = context.registerExchange(wsi: wsi, request: HTTPRequest(method: .get, path: "/"), expectsBody: false)
            exchange.closesAfterResponse = true
            return respond(exchange, .error(status: 400, code: "bad_request", message: "The request could not be read."))
        }
        let exchange = context.registerExchange(wsi: wsi, request: request, expectsBody: bodyLength > 0)
        if bodyLength > HTTPRequest.maximumBodySize {
            exchange.closesAfterResponse = true
            return respond(exchange, .error(
                status: 413, code: "payload_too_large",
                message: "The request body is \(bodyLength) bytes; the limit is \(HTTPRequest.maximumBodySize)."))
        }
        if exchange.expectsBody {
            // The whole request, head and body, must be in by the deadline; libwebsockets'
            // own body timeout restarts with every byte, so a trickle would never end.
            let start = context.connectionTracker.requestStart(wsi, now: MonotonicClock.now())
            context.scheduleBodyDeadline(
                exchange, at: start + Int64(context.options.requestLimits.requestTimeoutSeconds) * 1_000_000)
            return 0
        }
        return runHandler(exchange)
    }

    /// The answer to a method no route of this server takes, with the ones it does (`allow`).
    static func unknownMethod(_ name: String) -> APIError {
        APIError(status: 405, code: "method_not_allowed",
            message: "This server does not handle the request method \(name); it answers \(allowedMethods).",
            headers: [HTTPHeader("allow", allowedMethods)])
    }

    static let allowedMethods = HTTPMethod.allCases.map(\.rawValue).joined(separator: ", ")

    /// Answers a refused request and closes the connection once the answer is out.
    /// (`method` nil: one this server does not know; the answer then has a body, as for GET.)
    private func refuse(_ refusal: APIError, method: HTTPMethod?, methodName: String, path: String,
                        peer: String, forwardedFor: String?) -> Int32 {
        context.options.onRefusal(HTTPRefusalRecord(
            method: methodName, path: path, peerAddress: peer,
            clientAddress: context.options.clientAddresses.clientAddress(peer: peer, forwardedFor: forwardedFor),
            refusal: refusal))
        let exchange = context.registerExchange(wsi: wsi, request: HTTPRequest(method: method ?? .get, path: path),
                                                expectsBody: false)
        exchange.closesAfterResponse = true
        return respond(exchange, refusal.response)
    }

    /// LWS_CALLBACK_RAW_RX on a connection libwebsockets gave up parsing as HTTP: a request
    /// line with a method it does not know (TRACE, anything made up) or CONNECT. Answers the
    /// API's JSON 405, written raw since there is no HTTP state left, and closes.
    func refuseUnknownMethod(_ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        let bytes = input.map { Array(UnsafeRawBufferPointer(start: $0, count: min(length, 512))) } ?? []
        let line = bytes.prefix { $0 != 13 && $0 != 10 }.split(separator: UInt8(ascii: " "), maxSplits: 2)
        let method = line.first.map { String(decoding: $0.prefix(32), as: UTF8.self) } ?? ""
        let path = line.count > 1 ? String(decoding: line[1].prefix(256), as: UTF8.self) : ""
        let refusal = Self.unknownMethod(method)
        let peer = peerAddress()
        context.options.onRefusal(HTTPRefusalRecord(method: method, path: path, peerAddress: peer,
                                                    clientAddress: peer, refusal: refusal))
        let raw = HTTPRawResponse.bytes(refusal.response, extraHeaders: context.options.responseHeaders)
        var buffer = [UInt8](repeating: 0, count: Int(rr_lws_pre)) + raw
        _ = buffer.withUnsafeMutableBufferPointer { buffer in
            lws_write(wsi, buffer.baseAddress! + Int(rr_lws_pre), raw.count, LWS_WRITE_HTTP)  // LWS_WRITE_RAW is this, as a macro
        }
        return -1
    }

    /// LWS_CALLBACK_CLOSED_HTTP: libwebsockets 4.1.6 closes a connection whose head it cannot
    /// take (a %00 in the query, a head past its buffer, more pieces than it keeps, its header
    /// timeout) without an answer, a log line of ours or any callback before it. This is the
    /// first word we get, and the socket's byte counts tell what happened: bytes came since the
    /// request began, none went out, no head arrived whole. Then the refusal it would have been
    /// is logged; and where the socket still takes an answer (the header timeout closes it
    /// without shutting it down first; a parse failure has already sent a FIN, so there it
    /// cannot) the answer is written straight to it, after reading whatever the client still
    /// sent so the close that follows is a FIN rather than a reset that would destroy the answer.
    /// Not over TLS (the socket carries records, not text) nor for HTTP/2 streams.
    ///
    /// The same goes for a body that stops coming: libwebsockets cuts it after
    /// `HTTPRequestLimits.bodySilenceSeconds` without a byte, by the same kind of close, so that
    /// exchange gets its 408 here too.
    func answerDroppedHead() {
        guard lws_is_ssl(wsi) == 0, lws_get_network_wsi(wsi) == wsi, let socket = Self.socketState(wsi) else { return }
        let refusal: APIError
        let peer = context.connectionTracker.peer(of: wsi) ?? ""
        var method = "", path = "", client = peer
        if let exchange = context.exchange(of: wsi) {
            guard exchange.expectsBody, !exchange.responseStarted, socket.canSend else { return }
            let limits = context.options.requestLimits
            refusal = APIError(status: 408, code: "request_timeout",
                message: "The request body stopped arriving for \(limits.bodySilenceSeconds) seconds; send it again, whole.")
            method = exchange.request.method.rawValue
            path = exchange.request.path
            client = context.options.clientAddresses.clientAddress(
                peer: peer, forwardedFor: exchange.request[header: "x-forwarded-for"])
        } else {
            guard context.connectionTracker.droppedHeadUnanswered(wsi, bytes: socket.bytes) else { return }
            let now = MonotonicClock.now()
            refusal = HTTPFraming.unparsedHeadRefusal(
                bytesReceived: context.connectionTracker.bytesReceivedSinceRequestBegan(wsi, bytes: socket.bytes),
                elapsedMicroseconds: now - context.connectionTracker.requestStart(wsi, now: now),
                limits: context.options.requestLimits)
        }
        let fd = lws_get_socket_fd(wsi)
        context.options.onRefusal(HTTPRefusalRecord(method: method, path: path, peerAddress: peer, clientAddress: client,
                                                    refusal: refusal, answered: socket.canSend))
        guard socket.canSend else { return }
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<16 where recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
        let raw = HTTPRawResponse.bytes(refusal.response, extraHeaders: context.options.responseHeaders)
        _ = raw.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    /// The connection's socket byte counts, when it has a TCP socket that can tell.
    static func byteCounts(_ wsi: OpaquePointer) -> HTTPConnectionTracker<OpaquePointer>.ByteCounts? {
        socketState(wsi)?.bytes
    }

    /// Data bytes received (the peer's FIN, which TCP counts as one, taken off) and sent, and
    /// whether our side may still send (it has not shut down).
    static func socketState(_ wsi: OpaquePointer)
        -> (bytes: HTTPConnectionTracker<OpaquePointer>.ByteCounts, canSend: Bool)?
    {
        let fd = lws_get_socket_fd(wsi)
        guard fd >= 0 else { return nil }
        guard let counts = TCPByteCounts(socket: fd) else { return nil }
        let (received, sent, state) = (counts.received, counts.sent, counts.state)
        // Linux's TCP states (include/net/tcp_states.h). TCP counts the peer's FIN as a byte
        // received: in any state but these three it may have come, so one byte is taken off
        // (after a reset that undercounts by one, which only errs towards silence).
        let established: UInt8 = 1, finWait1: UInt8 = 4, finWait2: UInt8 = 5, closeWait: UInt8 = 8
        let noFINYet = [established, finWait1, finWait2].contains(state)
        let bytes = HTTPConnectionTracker<OpaquePointer>.ByteCounts(
            received: !noFINYet && received > 0 ? received - 1 : received, sent: sent)
        // Our side may still send until it has sent its own FIN.
        return (bytes, state == established || state == closeWait)
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
        guard exchange.expectsBody, !exchange.responseStarted, !exchange.handlerRunning else { return 0 }
        exchange.expectsBody = false
        return runHandler(exchange)
    }

    /// Calls the handler. An answer given before it returns is written now; otherwise the
    /// connection waits (with a timeout) for `LWSContext.deliver` to ask for WRITEABLE.
    private func runHandler(_ exchange: HTTPExchange) -> Int32 {
        exchange.handlerRunning = true
        context.options.httpHandler(exchange.request, context.responder(for: exchange.id))
        exchange.handlerRunning = false
        if let answer = exchange.answer {
            exchange.answer = nil
            return respond(exchange, answer)
        }
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, Self.answerTimeoutSeconds)
        return 0
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: a later answer has arrived, or more body is to go.
    func writeable(_ exchange: HTTPExchange) -> Int32 {
        if let answer = exchange.answer, !exchange.responseStarted {
            exchange.answer = nil
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
            return respond(exchange, answer)
        }
        return writeNext(exchange)
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

    private func headers() -> [String: String] {
        var headers: [String: String] = [:]
        for name in HTTPRequest.readHeaders {
            let value: String?
            switch name {
            case "authorization": value = header(WSI_TOKEN_HTTP_AUTHORIZATION)
            case "content-type": value = header(WSI_TOKEN_HTTP_CONTENT_TYPE)
            case "if-match": value = header(WSI_TOKEN_HTTP_IF_MATCH)
            case "x-forwarded-for": value = header(WSI_TOKEN_X_FORWARDED_FOR)
            default: value = customHeader(name)
            }
            if let value { headers[name] = value }
        }
        return headers
    }

    private func header(_ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &bytes, Int32(bytes.count), token) >= 0 else { return nil }
        return String(decoding: bytes.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header libwebsockets has no token for. It keeps those by name, lower-cased (as the
    /// tests show for any spelling a client sends), with the colon.
    private func customHeader(_ name: String) -> String? {
        let key = name.lowercased() + ":"
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
        guard length > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &bytes, Int32(bytes.count), key, Int32(key.utf8.count)) >= 0 else { return nil }
        return String(decoding: bytes.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Every piece of the query string, each copied at its exact size: libwebsockets splits
    /// the query at '&' and ';' and percent-decodes it. `lws_hdr_copy_fragment` tells a piece
    /// that is empty (0) from one that does not exist (-1).
    private func queryPieces() -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            guard copied >= 0 else { break }
            pieces.append(buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) })
            index += 1
        }
        return pieces
    }

    /// The head as `HTTPFraming` judges it.
    private func requestHead(path: String) -> HTTPRequestHead {
        let isHTTP2 = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_COLON_PATH) > 0
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        _ = lws_http_get_uri_and_method(wsi, &uri, &uriLength)
        let rawPath = uri.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(uriLength))) } ?? []
        let queryLength = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        return HTTPRequestHead(
            isHTTP2: isHTTP2,
            version: isHTTP2 ? nil : header(WSI_TOKEN_HTTP),
            path: rawPath,
            targetBytes: Int(uriLength) + (queryLength > 0 ? queryLength + 1 : 0),
            headerBytes: headerBytes(),
            host: isHTTP2 ? framingHeader(WSI_TOKEN_HTTP_COLON_AUTHORITY) : framingHeader(WSI_TOKEN_HOST),
            contentLength: framingHeader(WSI_TOKEN_HTTP_CONTENT_LENGTH),
            transferEncoding: framingHeader(WSI_TOKEN_HTTP_TRANSFER_ENCODING))
    }

    /// A header the framing rules judge: "" when it was sent empty. libwebsockets gives an
    /// empty header length 0, as if it were absent, and would take `Content-Length:` as no
    /// body and `Transfer-Encoding:` as none (seen writing fuzz-http-query, which reads heads so); only
    /// `lws_hdr_copy_fragment` tells an empty one (0) from a missing one (-1).
    private func framingHeader(_ token: lws_token_indexes) -> String? {
        if let value = header(token) { return value }
        var terminator: CChar = 0
        return lws_hdr_copy_fragment(wsi, &terminator, 1, token, 0) == 0 ? "" : nil
    }

    /// The header fields' names and values, for `HTTPRequestLimits.maxHeaderBytes`: every field
    /// libwebsockets knows by name, and the unknown ones the server reads. (libwebsockets 4.1.6
    /// cannot list the other unknown ones; they count only toward its own buffer.)
    private func headerBytes() -> Int {
        var total = 0
        for index in 0..<Int(WSI_TOKEN_COUNT.rawValue) {
            let token = lws_token_indexes(rawValue: UInt32(index))
            if Self.requestLineTokens.contains(token) { continue }
            let length = Int(lws_hdr_total_length(wsi, token))
            guard length > 0 else { continue }
            total += length + (lws_token_to_string(token).map { strlen($0) } ?? 0)
        }
        for name in HTTPRequest.readHeaders {
            let key = name + ":"
            let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
            if length > 0 { total += length + key.utf8.count }
        }
        return total
    }

    /// Tokens that hold the request line (method and path, query, version), not header fields.
    private static let requestLineTokens: Set<lws_token_indexes> = [
        WSI_TOKEN_GET_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_OPTIONS_URI, WSI_TOKEN_PUT_URI, WSI_TOKEN_PATCH_URI,
        WSI_TOKEN_DELETE_URI, WSI_TOKEN_CONNECT, WSI_TOKEN_HEAD_URI, WSI_TOKEN_HTTP, WSI_TOKEN_HTTP_URI_ARGS,
        WSI_TOKEN_HTTP_COLON_PATH, WSI_TOKEN_HTTP_COLON_METHOD,
    ]

    func peerAddress() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
        var address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // An IPv4 client of an IPv6 socket: one limit per address, whichever way it came.
        if address.hasPrefix("::ffff:") && address.contains(".") { address.removeFirst(7) }
        return address
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
    private func writeNext(_ exchange: HTTPExchange) -> Int32 {
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
        context.releaseExchange(of: wsi)
        context.connectionTracker.requestEnded(wsi, now: MonotonicClock.now(), bytes: Self.byteCounts(wsi))
        if closes { return -1 }
        return lws_http_transaction_completed(wsi) == 0 ? 0 : -1
    }
}
