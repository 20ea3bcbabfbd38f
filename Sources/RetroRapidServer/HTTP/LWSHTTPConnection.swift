#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RetroRapidSupport
import RetroRapidLWS

/// The callback of `protocols[0]`: every HTTP connection of the vhost, and the context-wide
/// reasons libwebsockets gives only to the first protocol. Every request's head is first held
/// to `HTTPRequestLimits` and the framing rules (`admit`), files and routes alike; requests on
/// callback mounts then go to `LWSContextOptions.httpHandler`; everything else (static files,
/// keep-alive bookkeeping) goes on to libwebsockets' own `lws_callback_http_dummy`.
///
/// Threading rule: runs on the service thread, like every libwebsockets callback (through
/// `LWSCallbackTrampoline`, which finds the `LWSContext` as its `owner`). It keeps the
/// context's `HTTPExchangeTable` and never blocks: a handler answers from memory or
/// hands the slow part (SQLite) to the `DatabaseWorker`, whose completion comes back through the
/// `ServiceMailbox` (drained here, on LWS_CALLBACK_EVENT_WAIT_CANCELLED) and reaches the
/// connection only if the exchange's id is still in the table.
func lwsHTTPCallback(_ owner: UnsafeMutableRawPointer, _ wsi: LWSConnection, _ reason: LWSCallbackReason,
                     _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                     _ length: Int) -> Int32 {
    let context = Unmanaged<LWSContext>.fromOpaque(owner).takeUnretainedValue()
    switch reason {
    case .eventWaitCancelled:
        // Someone called lws_cancel_service: run what other threads posted. libwebsockets
        // gives this reason to every protocol; this one, protocols[0], is the one that drains.
        // (`wsi` is a stand-in with no connection behind it.)
        context.mailbox.drain()
        context.serviceWoken()
        return 0
    case .filterNetworkConnection:
        // A new TCP connection, before anything is read: refused once shutdown has begun.
        return context.isAccepting ? 0 : -1
    case .wsiCreate:
        context.connectionOpened()
        context.connectionTracker.opened(wsi, now: MonotonicClock.now())
    case .serverNewClientInstantiated:
        // The socket is attached now (not yet at WSI_CREATE); at the close it may be gone.
        context.connectionTracker.accepted(wsi, peer: LWSHTTPConnection(wsi: wsi, context: context).peerAddress())
    case .wsiDestroy:
        // The last word on every connection, whatever protocol it ended on (WebSockets too).
        context.exchanges.release(of: wsi)
        context.admittedRequests[wsi] = nil
        context.connectionTracker.closed(wsi)
        context.connectionClosed()
    case .filterHTTPConnection:
        // Every request's head once complete, files and routes alike, before either is served
        // (not WebSocket upgrades, which libwebsockets hands to CONFIRM_UPGRADE instead).
        return LWSHTTPConnection(wsi: wsi, context: context).admit()
    case .httpFileCompletion:
        // A file went out whole: a next request on this connection starts its clock now.
        context.admittedRequests[wsi] = nil
        context.connectionTracker.requestEnded(wsi, now: MonotonicClock.now(), bytes: LWSHTTPConnection.byteCounts(wsi))
    case .rawAdopt:
        return 0  // a request line libwebsockets could not take as HTTP; its bytes come next
    case .rawRX:
        return LWSHTTPConnection(wsi: wsi, context: context).refuseUnknownMethod(input, length)
    case .http:
        return LWSHTTPConnection(wsi: wsi, context: context).begin()
    case .httpBody:
        if let exchange = context.exchanges.exchange(of: wsi) {
            return LWSHTTPConnection(wsi: wsi, context: context).receiveBody(exchange, input, length)
        }
    case .httpBodyCompletion:
        if let exchange = context.exchanges.exchange(of: wsi) {
            return LWSHTTPConnection(wsi: wsi, context: context).bodyComplete(exchange)
        }
    case .httpWriteable:
        if let exchange = context.exchanges.exchange(of: wsi) {
            return LWSHTTPConnection(wsi: wsi, context: context).writeable(exchange)
        }
    case .httpDropProtocol:
        // A connection that ends mid-exchange: a late answer must find nothing to write to.
        context.exchanges.release(of: wsi)
    case .closedHTTP:
        // The socket is still open here: a head libwebsockets dropped is logged, and answered
        // where the socket still takes an answer.
        LWSHTTPConnection(wsi: wsi, context: context).answerDroppedHead()
        // As above; and an HTTP/2 stream ends here, with no WSI_DESTROY of its own to count on.
        context.exchanges.release(of: wsi)
        context.admittedRequests[wsi] = nil
        context.connectionTracker.closed(wsi)
    default:
        break
    }
    return wsi.defaultHTTPCallback(reason, user: user, input: input, length: length)
}

/// The view of one connection (`LWSConnection`) that the callback works through.
private struct LWSHTTPConnection {
    let wsi: LWSConnection
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
            let name = wsi.header(.method) ?? "?"
            return refuse(Self.unknownMethod(String(name.prefix(32))), method: nil, methodName: name,
                          path: wsi.header(.path) ?? "", peer: peer, forwardedFor: nil)
        }
        let headers = headers()
        let client = context.options.clientAddresses.clientAddress(peer: peer, forwardedFor: headers["x-forwarded-for"])
        let network = wsi.networkConnection
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
            let exchange = context.exchanges.register(on: wsi, request: HTTPRequest(method: .get, path: "/"), expectsBody: false)
            exchange.closesAfterResponse = true
            return respond(exchange, .error(status: 400, code: "bad_request", message: "The request could not be read."))
        }
        let exchange = context.exchanges.register(on: wsi, request: request, expectsBody: bodyLength > 0)
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
        let exchange = context.exchanges.register(on: wsi, request: HTTPRequest(method: method ?? .get, path: path),
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
        _ = wsi.write(copying: raw, .http)  // a raw socket: LWS_WRITE_RAW is LWS_WRITE_HTTP
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
        guard !wsi.isTLS, wsi.hasOwnSocket, let socket = Self.socketState(wsi) else { return }
        let refusal: APIError
        let peer = context.connectionTracker.peer(of: wsi) ?? ""
        var method = "", path = "", client = peer
        if let exchange = context.exchanges.exchange(of: wsi) {
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
        let fd = wsi.socketDescriptor
        context.options.onRefusal(HTTPRefusalRecord(method: method, path: path, peerAddress: peer, clientAddress: client,
                                                    refusal: refusal, answered: socket.canSend))
        guard socket.canSend else { return }
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<16 where recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
        let raw = HTTPRawResponse.bytes(refusal.response, extraHeaders: context.options.responseHeaders)
        _ = raw.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    /// The connection's socket byte counts, when it has a TCP socket that can tell.
    static func byteCounts(_ wsi: LWSConnection) -> HTTPConnectionTracker<LWSConnection>.ByteCounts? {
        socketState(wsi)?.bytes
    }

    /// Data bytes received (the peer's FIN, which TCP counts as one, taken off) and sent, and
    /// whether our side may still send (it has not shut down).
    static func socketState(_ wsi: LWSConnection)
        -> (bytes: HTTPConnectionTracker<LWSConnection>.ByteCounts, canSend: Bool)?
    {
        let fd = wsi.socketDescriptor
        guard fd >= 0 else { return nil }
        guard let counts = TCPByteCounts(socket: fd) else { return nil }
        let (received, sent, state) = (counts.received, counts.sent, counts.state)
        // Linux's TCP states (include/net/tcp_states.h). TCP counts the peer's FIN as a byte
        // received: in any state but these three it may have come, so one byte is taken off
        // (after a reset that undercounts by one, which only errs towards silence).
        let established: UInt8 = 1, finWait1: UInt8 = 4, finWait2: UInt8 = 5, closeWait: UInt8 = 8
        let noFINYet = [established, finWait1, finWait2].contains(state)
        let bytes = HTTPConnectionTracker<LWSConnection>.ByteCounts(
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
        wsi.setTimeout(seconds: Self.answerTimeoutSeconds)
        return 0
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: a later answer has arrived, or more body is to go.
    func writeable(_ exchange: HTTPExchange) -> Int32 {
        if let answer = exchange.answer, !exchange.responseStarted {
            exchange.answer = nil
            wsi.clearTimeout()
            return respond(exchange, answer)
        }
        return writeNext(exchange)
    }

    private func requestLine() -> (HTTPMethod, String)? {
        guard let (lwsMethod, uri) = wsi.requestTarget() else { return nil }
        let method: HTTPMethod? = switch lwsMethod {
        case .get: .get
        case .post: .post
        case .options: .options
        case .put: .put
        case .patch: .patch
        case .delete: .delete
        case .head: .head
        case .http2: wsi.header(.method).flatMap(HTTPMethod.init(rawValue:))
        case .other: nil
        }
        guard let method else { return nil }
        return (method, String(decoding: uri, as: UTF8.self))
    }

    private func headers() -> [String: String] {
        var headers: [String: String] = [:]
        for name in HTTPRequest.readHeaders {
            let value: String?
            switch name {
            case "authorization": value = wsi.header(.authorization)
            case "content-type": value = wsi.header(.contentType)
            case "if-match": value = wsi.header(.ifMatch)
            case "cookie": value = wsi.header(.cookie)
            case "host": value = wsi.header(.host) ?? wsi.header(.authority)
            case "origin": value = wsi.header(.origin)
            case "x-forwarded-for": value = wsi.header(.forwardedFor)
            default: value = wsi.customHeader(name)
            }
            if let value { headers[name] = value }
        }
        return headers
    }

    /// Every piece of the query string, each copied at its exact size: libwebsockets splits
    /// the query at '&' and ';' and percent-decodes it, and tells a piece that is empty from
    /// one that does not exist.
    private func queryPieces() -> [[UInt8]] {
        wsi.headerFragments(.uriArguments)
    }

    /// The head as `HTTPFraming` judges it.
    private func requestHead(path: String) -> HTTPRequestHead {
        let isHTTP2 = wsi.headerLength(.path) > 0
        let rawPath = wsi.requestTarget().map { Array($0.uri) } ?? []
        let queryLength = wsi.headerLength(.uriArguments)
        return HTTPRequestHead(
            isHTTP2: isHTTP2,
            version: isHTTP2 ? nil : wsi.header(.httpVersion),
            path: rawPath,
            targetBytes: rawPath.count + (queryLength > 0 ? queryLength + 1 : 0),
            // Every field libwebsockets knows by name, and the unknown ones the server reads.
            headerBytes: wsi.headerFieldBytes(customNames: HTTPRequest.readHeaders),
            host: isHTTP2 ? framingHeader(.authority) : framingHeader(.host),
            contentLength: framingHeader(.contentLength),
            transferEncoding: framingHeader(.transferEncoding))
    }

    /// A header the framing rules judge: "" when it was sent empty. libwebsockets gives an
    /// empty header length 0, as if it were absent, and would take `Content-Length:` as no
    /// body and `Transfer-Encoding:` as none (seen writing fuzz-http-query, which reads heads so).
    private func framingHeader(_ header: LWSConnection.Header) -> String? {
        if let value = wsi.header(header) { return value }
        return wsi.headerIsPresentAndEmpty(header) ? "" : nil
    }

    /// The peer's address in its canonical spelling (an IPv4 client of an IPv6 socket by its
    /// IPv4 address: one limit per address, whichever way it came); "" when unknown.
    func peerAddress() -> String {
        wsi.peerAddress(canonical: true) ?? ""
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
        if wsi.peerWriteAllowance < 0 {  // -1: HTTP/1.x, no flow-control window
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
        wsi.writeHTTPHead(status: response.status, contentType: response.contentType,
                          contentLength: response.body.count,
                          headers: response.headers.map { (name: $0.name, value: $0.value) })
    }

    /// Writes the rest of the body, or on HTTP/2 as much of it as one frame and the peer's
    /// window allow (asking for WRITEABLE to continue). The last write ends the transaction,
    /// which leaves a keep-alive connection ready for its next request.
    private func writeNext(_ exchange: HTTPExchange) -> Int32 {
        guard exchange.sending else { return 0 }
        let remaining = exchange.pendingBody.count - exchange.sendOffset
        var count = remaining
        // -1 on HTTP/1; on HTTP/2 the bytes the peer's flow-control window has room for.
        let allowance = wsi.peerWriteAllowance
        if allowance >= 0 {
            count = min(count, Self.http2FrameSize, allowance)
            if count == 0 && remaining > 0 {
                wsi.requestWriteable()  // called again when the window opens
                return 0
            }
        }
        let isFinal = count == remaining
        let headroom = LWSConnection.headroom
        var buffer = [UInt8](repeating: 0, count: headroom + count)
        buffer.replaceSubrange(headroom..., with: exchange.pendingBody[exchange.sendOffset..<exchange.sendOffset + count])
        let written = buffer.withUnsafeMutableBufferPointer { buffer in
            wsi.write(buffer.baseAddress! + headroom, count: count, isFinal ? .httpFinal : .http)
        }
        guard written >= 0 else { return -1 }
        exchange.sendOffset += count
        guard isFinal else {
            wsi.requestWriteable()
            return 0
        }
        let closes = exchange.closesAfterResponse
        context.exchanges.release(of: wsi)
        context.connectionTracker.requestEnded(wsi, now: MonotonicClock.now(), bytes: Self.byteCounts(wsi))
        if closes { return -1 }
        return wsi.completeHTTPTransaction() ? 0 : -1
    }
}
