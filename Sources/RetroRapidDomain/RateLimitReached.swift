/// A key with no room left: ``RateLimitRepository/take(_:now:)`` throws it, having counted
/// nothing, and ``RateLimitRepository/refusal(_:now:)`` returns it. The server answers 429
/// with `retryAfter` (`RateLimitedError`).
public struct RateLimitReached: Error, Sendable, Equatable {
    /// The first key, in the order the caller gave them, that had no room.
    public let key: RateLimitKey
    /// Whole seconds, at least 1 and at most the window, until it has room again.
    public let retryAfter: Int

    public init(key: RateLimitKey, retryAfter: Int) {
        self.key = key
        self.retryAfter = retryAfter
    }
}
