import RetroRapidDomain
import RetroRapidLWS

/// One client on `/ws`: who it is, the message it is receiving, what waits to be written to
/// it, and its rate limit.
///
/// Threading rule: lives on the service thread. It is created on LWS_CALLBACK_ESTABLISHED and
/// its `wsi` is valid until LWS_CALLBACK_CLOSED, when the hub forgets it; nothing else may
/// keep the `wsi`.
final class WebSocketConnection {
    let id: Int
    let wsi: LWSConnection
    /// The address the socket comes from: the client, or a reverse proxy in front of us.
    let peerAddress: String
    /// The client's address (`ClientAddressResolver`): the per-IP limit counts it.
    let clientAddress: String
    var state = State.awaitingHello

    /// When the upgrade completed (µs, monotonic): the hello timeout runs from here.
    let openedAt: Int64
    /// When the last complete message came (µs, monotonic), whatever it was.
    var heardAt: Int64

    enum State {
        case awaitingHello
        /// `hello` is being checked on the storage thread.
        case authenticating
        case ready(Identity)
    }

    /// Who signed in on this connection.
    struct Identity {
        let playerID: Int64
        let deviceID: Int64
        let publicID: String
        let displayName: String
    }

    var identity: Identity? {
        if case .ready(let identity) = state { identity } else { nil }
    }

    /// Set once the connection must end: every later RECEIVE is refused and the next
    /// WRITEABLE (after what is queued) sends the close frame. Never cleared.
    private(set) var closing: ProtocolError.Close?

    /// The last game this connection played to its end: a move after it is "game over",
    /// not "no game".
    var lastEndedGameID: String?

    var rate: TokenBucket
    /// Messages refused in a row for going over the rate; many mean a flood.
    var refusedInARow = 0

    private var incoming: WebSocketIncomingMessage
    /// Messages waiting for WRITEABLE, each with `LWSConnection.headroom` bytes of headroom.
    private var queue: WebSocketOutgoingQueue
    /// When the last PONG came (monotonic µs): the keepalive's proof of life besides messages.
    var pongAt: Int64 = 0

    // The fields below are of odd sizes (an optional's tag, a Bool): kept together, in this
    // order, so the padding Swift puts after each optional holds the Bools instead. There is
    // one object per connection, so every byte of padding counts as many times as players.

    /// The seat of a match this connection plays, if any.
    var seat: MatchSeat.Address?
    /// The close frame is libwebsockets' to send now.
    private var closeFrameRequested = false
    /// A PING waits for the next WRITEABLE (it goes before queued messages: it is tiny, and
    /// a client busy reading steps must still answer it).
    private var pingRequested = false
    /// LWS_CALLBACK_CLOSED has come: `wsi` is freed. Anything still holding this object
    /// (by mistake) can then no longer reach libwebsockets through it.
    private(set) var isGone = false
    /// The connection has its own TCP socket (HTTP/1.1 upgrade), not a stream inside an
    /// HTTP/2 connection: only then may a message be written outside WRITEABLE.
    private let isOwnSocket: Bool
    /// The seat of a match this connection watches, if any (never with `seat`: a connection
    /// plays or watches).
    var watching: MatchSeat.Address?
    /// Since when the idle timeout runs: set when the connection signs in or its game stops
    /// running, nil while a game runs on it (a player listening to steps is not idle). The
    /// connection is idle from the later of this and `heardAt`.
    var idleSince: Int64?

    func markGone() { isGone = true }

    init(id: Int, wsi: LWSConnection, peerAddress: String, clientAddress: String, limits: WebSocketLimits, now: Int64) {
        self.id = id
        self.wsi = wsi
        isOwnSocket = wsi.hasOwnSocket
        self.peerAddress = peerAddress
        self.clientAddress = clientAddress
        openedAt = now
        heardAt = now
        incoming = WebSocketIncomingMessage(limit: limits.maxMessageBytes)
        queue = WebSocketOutgoingQueue(capacity: limits.maxQueuedMessages)
        rate = TokenBucket(capacity: limits.inputBurst, ratePerSecond: limits.inputsPerSecond, now: now)
    }

    // MARK: - Receiving

    /// One RECEIVE: a fragment of a message. `remaining` is what libwebsockets says is still to
    /// come in this frame, so an oversized frame is refused before it is all read.
    func receive(_ bytes: UnsafeRawBufferPointer, isFinal: Bool, remaining: UInt) -> WebSocketIncomingMessage.Result {
        incoming.append(bytes, isFinal: isFinal, remaining: remaining)
    }

    // MARK: - Sending

    /// Writes `message` now when nothing waits before it, encoded in the shared `buffer`;
    /// otherwise queues it and asks for WRITEABLE. `.queueFull` when the queue is full: the
    /// client is not reading (the kernel's buffer is full as well), and the caller drops it.
    ///
    /// Why write outside WRITEABLE: a step is one small frame the socket almost always takes
    /// at once, and going through WRITEABLE costs two `epoll_ctl` calls (POLLOUT on, then
    /// off), an event-loop round and an allocation per message: the largest cost we could
    /// avoid at 12,500 games (docs/BENCHMARKS.md). libwebsockets allows a write in any callback on the service
    /// thread as long as the last one is not still buffered (`lws_partial_buffered`, lws-ws-
    /// state.h); a write the socket takes only in part is finished by libwebsockets itself,
    /// and everything after it waits in the queue until then. Never on an HTTP/2 stream, where
    /// every write must wait for the stream's WRITEABLE (flow control).
    func send(_ message: ServerMessage, using buffer: WebSocketSendBuffer) -> SendOutcome {
        guard closing == nil, !isGone else { return .ignored }  // going away: nothing more to say
        if queue.isEmpty && isOwnSocket && !wsi.isPartiallyBuffered {
            let written = buffer.withEncoded(message) { bytes in
                wsi.write(bytes.baseAddress! + LWSConnection.headroom, count: bytes.count - LWSConnection.headroom, .text)
            }
            // The socket failed: outside a callback we cannot return -1, so libwebsockets is
            // asked to close it on its next turn; nothing more is sent.
            if written < 0 {
                closing = .init(code: ProtocolError.Close.abnormal, reason: "write failed")
                wsi.closeOnNextTurn()
            }
            return .written
        }
        guard queue.append(message.encoded(headroom: LWSConnection.headroom)) else { return .queueFull }
        wsi.requestWriteable()
        return .queued
    }

    /// `send(_:using:)` for a message encoded once for several receivers: written now from
    /// its bytes when nothing waits, otherwise the same bytes queued.
    func send(_ message: WebSocketSharedMessage) -> SendOutcome {
        guard closing == nil, !isGone else { return .ignored }
        if queue.isEmpty && isOwnSocket && !wsi.isPartiallyBuffered {
            let written = message.withBuffer { bytes in
                wsi.write(bytes.baseAddress! + LWSConnection.headroom, count: bytes.count - LWSConnection.headroom, .text)
            }
            if written < 0 {
                closing = .init(code: ProtocolError.Close.abnormal, reason: "write failed")
                wsi.closeOnNextTurn()
            }
            return .written
        }
        guard queue.append(.shared(message)) else { return .queueFull }
        wsi.requestWriteable()
        return .queued
    }

    enum SendOutcome {
        /// Handed to libwebsockets now.
        case written
        /// Waiting for WRITEABLE behind an earlier message.
        case queued
        /// Not sent: the queue is full.
        case queueFull
        /// Not sent: the connection is closing.
        case ignored
    }

    /// Ends the connection with `close` after what is queued (an error message explaining it,
    /// usually). `dropQueue` forgets the queue first (a client that does not read).
    func close(_ close: ProtocolError.Close, dropQueue: Bool = false) {
        guard closing == nil, !isGone else { return }
        closing = close
        if dropQueue { queue.removeAll() }
        wsi.requestWriteable()
        // A client that never lets us write would otherwise hold the socket: kill it if the
        // close has not gone out in a few seconds.
        wsi.setTimeout(seconds: 5)
    }

    /// The client sent a close frame: libwebsockets replies to it, and nothing more is sent
    /// or read (LWS_CALLBACK_WS_PEER_INITIATED_CLOSE).
    func peerIsClosing() {
        guard closing == nil else { return }
        closing = .init(code: ProtocolError.Close.normal, reason: "")
        queue.removeAll()
    }

    var queuedCount: Int { queue.count }

    /// Sends a WebSocket PING on the next WRITEABLE; the client's PONG sets `pongAt`.
    func ping() {
        guard closing == nil, !isGone else { return }
        pingRequested = true
        wsi.requestWriteable()
    }

    /// LWS_CALLBACK_SERVER_WRITEABLE: one `lws_write` (libwebsockets allows no more), then ask
    /// again if more waits. Returns the callback's result: -1 closes (after the close frame).
    func writeNext() -> Int32 {
        // After our -1, libwebsockets sends the close frame itself but may still call here once
        // more; a second -1 would drop the connection before that frame goes out.
        if closeFrameRequested { return 0 }
        if pingRequested {
            pingRequested = false
            // Not empty: libwebsockets 4.1.6 does not pass an empty PONG to the callback, so
            // the answer to an empty PING would never count.
            let payload = Array("alive?".utf8)
            let written = wsi.write(copying: payload, .ping)
            guard written >= 0 else { return -1 }
            if !queue.isEmpty || closing != nil { wsi.requestWriteable() }
            return 0
        }
        guard let message = queue.popFirst() else {
            if let closing {
                closeNow(closing)
                closeFrameRequested = true
                return -1
            }
            return 0
        }
        let headroom = LWSConnection.headroom
        let written: Int
        // Consumed, so the popped bytes are the only reference and are written in place.
        switch consume message {
        case .own(var bytes):
            written = bytes.withUnsafeMutableBufferPointer { buffer in
                wsi.write(buffer.baseAddress! + headroom, count: buffer.count - headroom, .text)
            }
        case .shared(let shared):
            written = shared.withBuffer { buffer in
                wsi.write(buffer.baseAddress! + headroom, count: buffer.count - headroom, .text)
            }
        }
        guard written >= 0 else { return -1 }
        if !queue.isEmpty || closing != nil { wsi.requestWriteable() }
        return 0
    }

    /// Sets the close frame's status and reason; the caller then returns -1 from the callback.
    private func closeNow(_ close: ProtocolError.Close) {
        closing = closing ?? close
        // A failed socket gets no close frame (and 1006 may not be sent in one).
        guard close.code != ProtocolError.Close.abnormal else { return }
        wsi.setCloseReason(code: Int(close.code), reason: close.reason)
    }
}
