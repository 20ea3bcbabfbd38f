import Foundation

/// The counts behind the limits on guessing secrets and on new players (`rate_limit_keys`,
/// `rate_limit_events`), in the database so that every node on it and every restart count
/// against one budget (docs/STORAGE.md, "Rate limits"). The rule for what counts is
/// ``RateLimitWindow``, shared by both backends.
///
/// A guess is counted before it is tried: ``take(_:now:)`` checks every key and counts one
/// event for each in one transaction, under each key's lock, so concurrent takes on any number
/// of connections and nodes never count more than the limit; a guess that then succeeds is
/// uncounted with ``release(_:)``. A sign-in, which nearly always succeeds, only asks
/// ``refusal(_:now:)`` (a read) first and takes after it fails.
///
/// Used from one thread at a time (a storage thread), like every repository.
public protocol RateLimitRepository {
    /// Nil when `key` has room for one more event at `now` (milliseconds since 1970), from its
    /// `count`-th newest event in the window; else its refusal. Reads only.
    func refusal(_ key: RateLimitKey, nowMilliseconds now: Int64) throws -> RateLimitReached?

    /// Counts one event at `now` for every key when every key has room, in one transaction
    /// (committed when it returns); else throws ``RateLimitReached`` for the first key, in the
    /// order given, that has none, and counts nothing. A key that is not valid
    /// (``RateLimitKey/validate()``) is refused with `invalid` before anything runs.
    @discardableResult
    func take(_ keys: [RateLimitKey], now: Date) throws -> RateLimitTicket

    /// Uncounts the events `take` counted for `ticket` (the attempt was no failure). Deleting
    /// what is gone already (pruned) is no error.
    func release(_ ticket: RateLimitTicket) throws

    /// Deletes the events at or before `cutoff` and the keys not checked since: call it with
    /// now minus the longest window in use. Returns the rows deleted.
    @discardableResult
    func prune(before cutoff: Date) throws -> Int
}

extension RateLimitRepository {
    /// Nil when every key has room for one more event at `now`; else the first key, in the
    /// order given, that has none. Reads only: takes no lock and counts nothing. A key that is
    /// not valid is refused with `invalid` before anything runs.
    public func refusal(_ keys: [RateLimitKey], now: Date) throws -> RateLimitReached? {
        for key in keys { try key.validate() }
        let milliseconds = try RateLimitWindow.milliseconds(now)
        for key in keys {
            if let reached = try refusal(key, nowMilliseconds: milliseconds) { return reached }
        }
        return nil
    }
}
