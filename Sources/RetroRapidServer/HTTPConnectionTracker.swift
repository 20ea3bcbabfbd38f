/// Which client address each open HTTP connection counts against, and when each connection's
/// current request began: the bookkeeping behind `HTTPRequestLimits.maxConnectionsPerIP` and
/// `requestTimeoutSeconds`.
///
/// A connection is counted against a client address once a request's head on it is complete:
/// only then is X-Forwarded-For known, and behind a trusted proxy every connection comes from
/// the proxy, which must not be capped as if it were one client (ClientAddress.swift). A proxy
/// that reuses one upstream connection for several clients moves it to each request's client.
/// A head still arriving is bounded by libwebsockets' header timeout instead.
///
/// Pure: the caller says what time it is. The service thread owns the one in `LWSContext`,
/// keyed by connection.
struct HTTPConnectionTracker<Key: Hashable> {
    let maxConnectionsPerAddress: Int
    private var addressOf: [Key: String] = [:]
    private var countByAddress: [String: Int] = [:]
    /// When the request now on each connection began (microseconds, monotonic).
    private var requestStartedAt: [Key: Int64] = [:]

    init(maxConnectionsPerAddress: Int) {
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// A connection was accepted: its first request's clock starts.
    mutating func opened(_ key: Key, now: Int64) {
        requestStartedAt[key] = now
    }

    /// The connection's request was answered: the next one's clock starts.
    mutating func requestEnded(_ key: Key, now: Int64) {
        requestStartedAt[key] = now
    }

    /// When the current request began; `now` for a connection not seen opening (an HTTP/2
    /// stream, whose head arrives in one frame).
    func requestStart(_ key: Key, now: Int64) -> Int64 {
        requestStartedAt[key] ?? now
    }

    /// Counts `key` against `address`. False, and nothing changed, when the address already
    /// has `maxConnectionsPerAddress` other connections counted.
    mutating func attribute(_ key: Key, to address: String) -> Bool {
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
    }

    func connections(of address: String) -> Int {
        countByAddress[address, default: 0]
    }

    private mutating func release(_ key: Key) {
        guard let address = addressOf.removeValue(forKey: key) else { return }
        let count = countByAddress[address, default: 1]
        countByAddress[address] = count > 1 ? count - 1 : nil
    }
}
