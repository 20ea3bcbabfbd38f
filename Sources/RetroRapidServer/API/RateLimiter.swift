import RetroRapidSupport
import Synchronization

/// One `RateLimit` per key (a client address, a player): the times of the events counted in
/// the last window, so "at most N in any window" holds exactly, whatever the spacing (a token
/// bucket of N refilling N per window would admit nearly 2N in one window: N at once, then
/// the refill). In memory, one server node; it resets on restart. For the limits on guessing
/// and on new players it is only the first filter: the database's counts decide
/// (`RateLimits`), and a refusal from there is copied here (`refuse`).
///
/// The caller decides what an event is: every request (`take`), or only a failed guess
/// (`retryAfter` before the attempt, `record` after a failure), so honest use costs nothing.
///
/// Threading: any thread; a lock guards the table. The HTTP routes ask on the service thread
/// and the storage thread asks and records inside its jobs. Memory is bounded: a key keeps at
/// most `limit.count` times, and past `maximumKeys` keys the ones with nothing left in their
/// window are dropped, then, if that is not enough, the least recently active.
final class RateLimiter: Sendable {
    let limit: RateLimit
    let maximumKeys: Int
    private let table = Mutex<[String: [ContinuousClock.Instant]]>([:])

    init(_ limit: RateLimit, maximumKeys: Int = 10_000) {
        precondition(maximumKeys >= 4, "a rate limiter remembers a few keys at least")
        self.limit = limit
        self.maximumKeys = maximumKeys
    }

    /// Keys remembered now.
    var keyCount: Int {
        table.withLock { $0.count }
    }

    /// Events of `key` counted in the window ending at `now`.
    func count(_ key: String, now: ContinuousClock.Instant) -> Int {
        table.withLock { table in table[key].map { Self.live($0, now: now, window: limit.window).count } ?? 0 }
    }

    /// Nil when one more event of `key` fits at `now`; else the whole seconds (at least 1)
    /// until the oldest one counted leaves the window, when one fits again. Counts nothing.
    func retryAfter(_ key: String, now: ContinuousClock.Instant) -> Int? {
        table.withLock { table in wait(table[key], now: now) }
    }

    /// Counts one event of `key` at `now`, fitting or not (the caller asked first). Only the
    /// newest `limit.count` are kept: older ones could never refuse anything again.
    func record(_ key: String, now: ContinuousClock.Instant) {
        table.withLock { table in insert(key, now: now, into: &table) }
    }

    /// Makes `key` full until `wait` from `now` (what the database answered for it), so its
    /// next events are refused here until then without asking the database again.
    func refuse(_ key: String, now: ContinuousClock.Instant, for wait: Duration) {
        // `limit.count` events that leave the window when the wait is over.
        let leaving = now + min(wait, limit.window) - limit.window
        table.withLock { table in
            if table[key] == nil, table.count >= maximumKeys { prune(&table, now: now) }
            table[key] = Array(repeating: leaving, count: limit.count)
        }
    }

    /// `retryAfter` and, when it fits, `record`, in one step: nil when allowed (and counted).
    func take(_ key: String, now: ContinuousClock.Instant) -> Int? {
        table.withLock { table in
            if let wait = wait(table[key], now: now) { return wait }
            insert(key, now: now, into: &table)
            return nil
        }
    }

    private func wait(_ times: [ContinuousClock.Instant]?, now: ContinuousClock.Instant) -> Int? {
        guard let times else { return nil }
        let live = Self.live(times, now: now, window: limit.window)
        guard live.count >= limit.count, let oldest = live.first else { return nil }
        // The oldest counted event leaves the window at oldest + window.
        return max(1, Int((oldest + limit.window - now).seconds.rounded(.up)))
    }

    private func insert(_ key: String, now: ContinuousClock.Instant, into table: inout [String: [ContinuousClock.Instant]]) {
        var times = table[key].map { Array(Self.live($0, now: now, window: limit.window)) } ?? []
        times.append(now)
        if times.count > limit.count { times.removeFirst(times.count - limit.count) }
        if table[key] == nil, table.count >= maximumKeys { prune(&table, now: now) }
        table[key] = times
    }

    /// Makes room for a quarter of `maximumKeys` new keys, so a flood of new keys prunes once
    /// per thousands of them rather than on each: keys whose events have all left the window
    /// hold no information; past those, the least recently active are forgotten (which errs
    /// on their side, as a restart would).
    private func prune(_ table: inout [String: [ContinuousClock.Instant]], now: ContinuousClock.Instant) {
        table = table.filter { !Self.live($0.value, now: now, window: limit.window).isEmpty }
        let target = maximumKeys - maximumKeys / 4
        guard table.count > target else { return }
        let newestFirst = table.sorted { ($0.value.last ?? now) > ($1.value.last ?? now) }
        table = Dictionary(uniqueKeysWithValues: newestFirst.prefix(target).map { ($0.key, $0.value) })
    }

    /// The times still in the window ending at `now` (strictly less than `window` ago), oldest
    /// first as stored.
    private static func live(_ times: [ContinuousClock.Instant], now: ContinuousClock.Instant,
                             window: Duration) -> ArraySlice<ContinuousClock.Instant> {
        let start = times.firstIndex { now - $0 < window } ?? times.endIndex
        return times[start...]
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
