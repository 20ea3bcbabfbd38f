import Foundation

/// The rule both backends apply to the events they read, written once: an event counts while
/// it is less than the window old (as the server's in-memory `RateLimiter`); a key has room
/// while fewer than `count` events count; a full key has room again when its `count`-th
/// newest event leaves the window. Exact over every window, not a bucket that refills.
public enum RateLimitWindow {
    /// 9999-12-31T23:59:59.999Z: a stored time past it (or below 0) is a damaged row.
    public static let latestMilliseconds: Int64 = 253_402_300_799_999

    /// `now` in whole milliseconds since 1970, floored. Throws `invalid` for a date outside
    /// 1970…9999, which no clock of ours gives, rather than trap converting it.
    public static func milliseconds(_ now: Date) throws(StoreError) -> Int64 {
        let value = (now.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite, let milliseconds = Int64(exactly: value), (0...latestMilliseconds).contains(milliseconds) else {
            throw StoreError(.invalid, "must be a time between 1970 and 9999", field: "now")
        }
        return milliseconds
    }

    /// The events after this time (strictly) count at `now`. Both terms are bounded (`now` by
    /// ``latestMilliseconds``, the window by ``RateLimitKey/longestWindow``): no overflow.
    public static func start(_ key: RateLimitKey, now: Int64) -> Int64 {
        now - key.windowMilliseconds
    }

    /// Nil when `key` has room at `now`; else the refusal. `countThNewest` is the stored time of
    /// the key's `count`-th newest event after ``start(_:now:)`` (nil: fewer events than that).
    /// A stored time is checked before any arithmetic: outside 0…``latestMilliseconds`` it is
    /// `unreadable`, never a trap. A time ahead of `now` (another node's clock runs fast) waits
    /// no longer than one window.
    public static func refusal(_ key: RateLimitKey, countThNewest: Int64?, now: Int64) throws(StoreError) -> RateLimitReached? {
        guard let stored = countThNewest else { return nil }
        guard (0...latestMilliseconds).contains(stored) else {
            throw StoreError.unreadable("rate_limit_events.at_ms holds \(stored), not a time in milliseconds since 1970")
        }
        let window = key.windowMilliseconds
        let remaining = stored + window - now  // each term bounded above: cannot overflow
        let seconds = min(max(1, (remaining + 999) / 1000), max(1, (window + 999) / 1000))
        return RateLimitReached(key: key, retryAfter: Int(clamping: seconds))
    }
}
