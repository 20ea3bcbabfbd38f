import RetroRapidSupport

/// Which client address each open HTTP connection counts against, and when each connection's
/// current request began: the bookkeeping behind `HTTPRequestLimits.maxConnectionsPerIP` and
/// `requestTimeoutSeconds`.
///
/// A connection is counted against a client address once a request's head on it is complete:
/// only then is X-Forwarded-For known, and behind a trusted proxy every connection comes from
/// the proxy, which must not be capped as if it were one client (ClientAddress.swift). A proxy
/// that reuses one upstream connection for several clients moves it to each request's client.
/// A head still arriving is bounded by libwebsockets' header timeout instead. Addresses count
/// by `IPAddress.limitKey`: an IPv6 client by its /64, which it could otherwise walk through
/// to open the maximum from each of its addresses.
///
/// Pure: the caller says what time it is. The service thread owns the one in `LWSContext`,
/// keyed by connection.
struct HTTPConnectionTracker<Key: Hashable> {
    let maxConnectionsPerAddress: Int
    /// Each counted connection's limit key, and the connections counted under each key.
    private var addressOf: [Key: String] = [:]
    private var countByAddress: [String: Int] = [:]
    /// When the request now on each connection began (microseconds, monotonic).
    private var requestStartedAt: [Key: Int64] = [:]
    /// Connections whose current request has no complete head yet, with the socket's byte
    /// counts (received, sent) when that request began.
    private var headPending: [Key: ByteCounts] = [:]
    /// The peer's address, noted when the socket is attached: at the close it may be gone.
    private var peers: [Key: String] = [:]

    /// A socket's bytes received and sent so far.
    struct ByteCounts: Equatable {
        var received: UInt64
        var sent: UInt64
    }

    init(maxConnectionsPerAddress: Int) {
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// A connection was accepted: its first request's clock starts.
    mutating func opened(_ key: Key, now: Int64) {
        requestStartedAt[key] = now
        headPending[key] = ByteCounts(received: 0, sent: 0)
    }

    mutating func accepted(_ key: Key, peer: String) {
        peers[key] = peer
    }

    func peer(of key: Key) -> String? {
        peers[key]
    }

    /// The connection's request was answered: the next one's clock starts. `bytes`: the
    /// socket's counts now (nil when unknown: then a next head that fails goes unanswered).
    mutating func requestEnded(_ key: Key, now: Int64, bytes: ByteCounts?) {
        requestStartedAt[key] = now
        headPending[key] = bytes
    }

    /// The current request's head is complete (and answered, or on its way to a handler).
    mutating func headArrived(_ key: Key) {
        headPending[key] = nil
    }

    /// Whether a connection that is closing was dropped by libwebsockets in the middle of a
    /// head it could not take, with nothing written back: bytes came since the request began,
    /// none went out, and no head arrived whole.
    func droppedHeadUnanswered(_ key: Key, bytes: ByteCounts) -> Bool {
        guard let start = headPending[key] else { return false }
        return bytes.received > start.received && bytes.sent == start.sent
    }

    /// Bytes received since the current request began, for `droppedHeadUnanswered`'s answer.
    func bytesReceivedSinceRequestBegan(_ key: Key, bytes: ByteCounts) -> UInt64 {
        bytes.received - min(bytes.received, headPending[key]?.received ?? 0)
    }

    /// When the current request began; `now` for a connection not seen opening (an HTTP/2
    /// stream, whose head arrives in one frame).
    func requestStart(_ key: Key, now: Int64) -> Int64 {
        requestStartedAt[key] ?? now
    }

    /// Counts `key` against `address` (its limit key). False, and nothing changed, when that
    /// key already has `maxConnectionsPerAddress` other connections counted.
    mutating func attribute(_ key: Key, to client: String) -> Bool {
        let address = IPAddress.limitKey(client)
        if addressOf[key] == address { return true }
        guard countByAddress[address, default: 0] < maxConnectionsPerAddress else { return false }
        release(key)
        addressOf[key] = address
        countByAddress[address, default: 0] += 1
        return true
    }

    /// The connection is gone.
    mutating func closed(_ key: Key) {
        release(key)
        requestStartedAt[key] = nil
        headPending[key] = nil
        peers[key] = nil
    }

    /// The connections counted against `address`'s limit key (its /64 for IPv6).
    func connections(of address: String) -> Int {
        countByAddress[IPAddress.limitKey(address), default: 0]
    }

    private mutating func release(_ key: Key) {
        guard let address = addressOf.removeValue(forKey: key) else { return }
        let count = countByAddress[address, default: 1]
        countByAddress[address] = count > 1 ? count - 1 : nil
    }
}
