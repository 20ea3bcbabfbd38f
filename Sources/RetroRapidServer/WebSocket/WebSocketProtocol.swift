#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RetroRapidLWS
import Foundation

/// The libwebsockets callback of the game protocol (`retrorapid.v1`, on `/ws`).
///
/// Threading rule: libwebsockets calls it on the service thread only, from `lws_service` (and
/// from `lws_context_destroy` for the last CLOSED and PROTOCOL_DESTROY). It finds its
/// `WebSocketHub` as its `owner` (`LWSProtocolDefinition.owner`, through the protocol's `user`)
/// and its `WebSocketConnection` in the connection itself (`LWSConnection.userPointer`): one
/// retained pointer, stored on ESTABLISHED and released on CLOSED. Not in per-session memory
/// (`user`): libwebsockets would allocate that for every connection (32 bytes of heap). It
/// ignores EVENT_WAIT_CANCELLED: the HTTP protocol (`protocols[0]`) drains the mailbox.
func webSocketProtocolCallback(_ owner: UnsafeMutableRawPointer, _ wsi: LWSConnection, _ reason: LWSCallbackReason,
                               _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                               _ length: Int) -> Int32 {
    let hub = Unmanaged<WebSocketHub>.fromOpaque(owner).takeUnretainedValue()
    let connection = wsi.userPointer.map { Unmanaged<WebSocketConnection>.fromOpaque($0).takeUnretainedValue() }

    switch reason {
    case .protocolInit:
        hub.protocolInitialised(context: wsi.contextPointer)
    case .protocolDestroy:
        hub.protocolDestroyed()
    case .established:
        limitSendBuffer(wsi, bytes: hub.limits.sendBufferBytes)
        // The request's headers are still there (libwebsockets drops them after this reason).
        let peer = wsi.peerAddress() ?? "unknown"
        let client = hub.clientAddresses.clientAddress(peer: peer, forwardedFor: wsi.header(.forwardedFor))
        let created = WebSocketConnection(id: hub.connections.nextID(), wsi: wsi, peerAddress: peer, clientAddress: client,
                                          limits: hub.limits, now: MonotonicClock.now())
        hub.established(created)
        wsi.userPointer = Unmanaged.passRetained(created).toOpaque()
    case .receive:
        guard let connection else { return -1 }
        // Sticky: once a connection is closing, what it sends is read and dropped until the
        // close frame has gone out (on WRITEABLE, after the error message that explains it).
        // Returning -1 here would end the connection at once and lose that message; the
        // timeout `close` sets bounds the wait at a few seconds.
        if connection.closing != nil { return 0 }
        // Every fragment of a message carries its first frame's opcode. The protocol is JSON
        // in text messages; a binary one is refused at its first fragment, not read as text.
        if wsi.isBinaryFrame {
            hub.refuse(connection, ProtocolError(.binaryMessage,
                "This server reads text messages only (one JSON object each); a binary message came. Closing.",
                close: .init(code: ProtocolError.Close.unsupportedData, reason: "binary messages are not accepted")))
            hub.metrics.flush()
            return 0
        }
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        switch connection.receive(bytes, isFinal: wsi.isFinalFragment,
                                  remaining: wsi.remainingPacketPayload) {
        case .incomplete:
            return 0
        case .tooLarge:
            // Counted across fragments: libwebsockets has no limit of its own (docs/LIBWEBSOCKETS-4.1.6.md).
            let limit = hub.limits.maxMessageBytes
            hub.refuse(connection, ProtocolError(.messageTooLarge,
                "Messages may be at most \(limit) bytes; this one was longer. Closing.",
                close: .init(code: ProtocolError.Close.messageTooLarge, reason: "message larger than \(limit) bytes")))
            hub.metrics.flush()
            return 0
        case .message(let message):
            hub.received(message, on: connection)
            return 0
        }
    case .peerInitiatedClose:
        // libwebsockets answers the client's close frame itself, on its next POLLOUT; a
        // message written at once meanwhile would go out before that answer.
        connection?.peerIsClosing()
        // It answers by echoing the payload; one that breaks RFC 6455 gets our status instead:
        // with a close reason set, returning -1 makes libwebsockets send that and close.
        let payload = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        if let refusal = WebSocketCloseFrame.refusal(of: payload) {
            wsi.setCloseReason(code: Int(refusal.code), reason: refusal.reason)
            hub.protocolViolation(on: connection, refusal)
            return -1
        }
    case .receivePong:
        connection?.pongAt = MonotonicClock.now()
    case .serverWriteable:
        guard let connection else { return -1 }
        return connection.writeNext()
    case .closed:
        guard let pointer = wsi.userPointer else { return 0 }
        wsi.userPointer = nil
        let closing = Unmanaged<WebSocketConnection>.fromOpaque(pointer)
        hub.closed(closing.takeUnretainedValue())
        closing.release()
    default:
        break
    }
    return 0
}

/// `protocols[0]`'s callback when the game protocol is on the vhost: it answers
/// LWS_CALLBACK_HTTP_CONFIRM_UPGRADE, which libwebsockets gives only to the HTTP protocol, and
/// passes everything else to `lwsHTTPCallback` unchanged.
///
/// Why here: CONFIRM_UPGRADE comes before libwebsockets matches the subprotocol, and it would
/// drop a connection offering only unknown ones without a word (and hand one offering none to
/// protocols[0]). Checking first lets a wrong path, a wrong or missing subprotocol, a full
/// per-IP quota or a shutdown be answered with an HTTP status and a JSON error body.
///
/// Threading rule: service thread, like every callback.
func lwsHTTPCallbackConfirmingGameUpgrades(_ owner: UnsafeMutableRawPointer, _ wsi: LWSConnection,
                                           _ reason: LWSCallbackReason, _ user: UnsafeMutableRawPointer?,
                                           _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    if reason == .httpConfirmUpgrade,
       let input, String(cString: input.assumingMemoryBound(to: CChar.self)).lowercased() == "websocket",
       let game = wsi.owner(ofProtocolNamed: WebSocketLimits.subprotocol) {
        let hub = Unmanaged<WebSocketHub>.fromOpaque(game).takeUnretainedValue()
        let offered = wsi.header(.webSocketProtocol).map { list in
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        // libwebsockets hands the path alone (percent-decoded, dot segments folded) and keeps
        // the query apart (`/ws?node=b`: nginx routes by it, docs/OPERATIONS.md "Scale out";
        // the server ignores it), so the path is compared whole: `/ws%3F…` is another path.
        let path = wsi.header(.getURI) ?? ""
        let client = hub.clientAddresses.clientAddress(peer: wsi.peerAddress() ?? "unknown",
                                                       forwardedFor: wsi.header(.forwardedFor))
        let origin = wsi.header(.origin)
        if let refusal = hub.refusalOfUpgrade(path: path, offeredProtocols: offered, clientAddress: client,
                                              origin: origin, host: wsi.header(.host)) {
            hub.metrics.errors.increment(refusal.error.code.rawValue)
            if refusal.error.code == .originNotAllowed {
                // Another site's page tried to connect, or a proxy's name is missing from
                // --allowed-origins: either way the operator should see it.
                hub.logger.warning("game connection refused: origin not allowed", metadata: [
                    "client.address": client, "http.origin": String(origin?.prefix(200) ?? ""),
                    "http.host": String(wsi.header(.host)?.prefix(200) ?? "")])
            }
            return writeRefusal(wsi, status: refusal.status, error: refusal.error)
        }
        return 0
    }
    return lwsHTTPCallback(owner, wsi, reason, user, input, length)
}

/// Answers an upgrade request with `status` and `{"error":{"code":…,"message":…}}`, the HTTP
/// API's error shape, then the connection closes. Returns what CONFIRM_UPGRADE must return: 1
/// (answered), or -1 (hang up) if even that failed.
///
/// The status line is written here rather than by `lws_add_http_common_headers`: at this point
/// libwebsockets has not read the request's HTTP version yet and would answer "HTTP/1.0",
/// which WebSocket clients reject as a malformed handshake reply.
private func writeRefusal(_ wsi: LWSConnection, status: Int, error: ProtocolError) -> Int32 {
    var json = JSONWriter()
    json.beginObject()
    json.key("error")
    json.beginObject()
    json.key("code"); json.string(error.code.rawValue)
    json.key("message"); json.string(error.message)
    json.endObject()
    json.endObject()
    let body = json.json
    let head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        + "content-type: application/json\r\n"
        + "content-length: \(body.count)\r\n"
        + "x-content-type-options: nosniff\r\n"
        + "cache-control: no-store\r\n"
        + "connection: close\r\n\r\n"
    let written = wsi.write(copying: Array(head.utf8) + body, .httpHeaders)
    return written < 0 ? -1 : 1
}

private func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 400: "Bad Request"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 429: "Too Many Requests"
    case 503: "Service Unavailable"
    default: "Error"
    }
}

/// Caps the kernel's send buffer of a game socket (`WebSocketLimits.sendBufferBytes`): what a
/// client that stops reading has not taken then piles up in its bounded, counted queue rather
/// than in megabytes of kernel memory. A failure leaves the kernel's default (the queue still
/// bounds our own memory, only later).
private func limitSendBuffer(_ wsi: LWSConnection, bytes: Int) {
    let fd = wsi.socketDescriptor
    guard fd >= 0 else { return }
    var size = Int32(bytes)
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
}
