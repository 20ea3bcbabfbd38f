/// The rate limit on one connection's messages: `rate` tokens a second up to `capacity`; each
/// message takes one. Integer arithmetic on a monotonic clock in microseconds.
struct TokenBucket: Equatable, Sendable {
    var capacity: Int { Int(storedCapacity) }
    var ratePerSecond: Int { Int(storedRatePerSecond) }
    /// 32 bits each (the protocol's are 40 and 20): one bucket per connection, 8 bytes less.
    private let storedCapacity: Int32
    private let storedRatePerSecond: Int32
    /// Tokens scaled by one million, so refills of a fraction of a token are kept.
    private var microTokens: Int64
    private var lastRefill: Int64

    init(capacity: Int, ratePerSecond: Int, now: Int64) {
        storedCapacity = Int32(capacity)
        storedRatePerSecond = Int32(ratePerSecond)
        microTokens = Int64(capacity) * 1_000_000
        lastRefill = now
    }

    /// Takes a token if there is one.
    mutating func take(now: Int64) -> Bool {
        if now > lastRefill {
            // µs elapsed × tokens/s = micro-tokens gained.
            microTokens = min(Int64(capacity) * 1_000_000, microTokens + (now - lastRefill) * Int64(ratePerSecond))
            lastRefill = now
        }
        guard microTokens >= 1_000_000 else { return false }
        microTokens -= 1_000_000
        return true
    }
}
