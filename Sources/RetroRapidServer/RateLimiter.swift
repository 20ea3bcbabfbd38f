import Synchronization

/// How often one client (one IP address) may do one thing: a bucket of `burst` tokens that
/// refills at `burst` per `window`. Each request takes a token; with none left it is refused
/// with 429 and a Retry-After of the seconds until the next token.
public struct RateLimit: Sendable, Equatable {
    public var burst: Int
    public var window: Duration

    public init(burst: Int, per window: Duration) {
        precondition(burst >= 1 && window > .zero, "a rate limit allows at least one request per positive window")
        self.burst = burst
        self.window = window
    }
}

/// Per-key token buckets, in memory (one server node; they reset on restart, which errs on the
/// side of the client). Keys are IP addresses.
///
/// Threading: any thread; handlers call it on the service thread, where a lock held for a
/// dictionary update costs nothing noticeable. The table is bounded: past `maximumKeys` the
/// buckets that have refilled completely (and so hold no information) are dropped.
final class RateLimiter: Sendable {
    let limit: RateLimit
    private let maximumKeys: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    init(_ limit: RateLimit, maximumKeys: Int = 10_000) {
        self.limit = limit
        self.maximumKeys = maximumKeys
    }

    /// Keys remembered now.
    var keyCount: Int {
        buckets.withLock { $0.count }
    }

    /// Takes a token for `key`: nil when allowed, else the whole seconds (at least 1) until
    /// one is free.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> Int? {
        let capacity = Double(limit.burst)
        let perSecond = capacity / limit.window.seconds
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + (now - bucket.updated).seconds * perSecond)
            bucket.updated = now
            defer {
                buckets[key] = bucket
                if buckets.count > maximumKeys { prune(&buckets, now: now, perSecond: perSecond, capacity: capacity) }
            }
            guard bucket.tokens >= 1 else {
                return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
            }
            bucket.tokens -= 1
            return nil
        }
    }

    private func prune(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant, perSecond: Double, capacity: Double) {
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated).seconds * perSecond < capacity }
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
