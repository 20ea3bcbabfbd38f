import Foundation

/// One key a rate limit counts, with the limit: at most `count` events of `action` for `key`
/// (in `scope`) in any `window`. The server's limits on guessing secrets and on new players
/// (`RateLimits` in RetroRapidServer) name their keys this way; ``RateLimitRepository`` keeps
/// the events where every node on the database sees them.
public struct RateLimitKey: Sendable, Hashable, CustomStringConvertible {
    /// What is limited: `code_redeem`, `link_code_claim`, `sign_in`, `player_create`.
    public let action: String
    /// Who it is counted for: `player`, `address`, `server`.
    public let scope: String
    /// The player's row id, the client address (an IPv6 client's /64), or `server`.
    public let key: String
    public let count: Int
    public let window: Duration

    public init(action: String, scope: String, key: String, count: Int, window: Duration) {
        self.action = action
        self.scope = scope
        self.key = key
        self.count = count
        self.window = window
    }

    /// The largest count and window a key may carry: the time arithmetic stays far from
    /// overflow, and a check reads at most `count` rows.
    public static let countRange = 1...1_000_000
    public static let longestWindow = Duration.seconds(366 * 86_400)

    /// The window in whole milliseconds (at least 1), as the stored times count it.
    public var windowMilliseconds: Int64 {
        let (seconds, attoseconds) = window.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// Throws `invalid` for a key the schema would refuse: empty or overlong names, a count or
    /// window out of range. Checked before any statement runs, so a bad key changes nothing.
    public func validate() throws(StoreError) {
        func name(_ text: String, _ field: String, maximum: Int) throws(StoreError) {
            guard !text.isEmpty, text.utf8.count <= maximum else {
                throw StoreError(.invalid, "must be 1 to \(maximum) bytes", field: field)
            }
        }
        try name(action, "action", maximum: 40)
        try name(scope, "scope", maximum: 40)
        try name(key, "key", maximum: 200)
        guard Self.countRange.contains(count) else {
            throw StoreError(.invalid, "must be \(Self.countRange.lowerBound) to \(Self.countRange.upperBound)", field: "count")
        }
        guard window > .zero, window <= Self.longestWindow else {
            throw StoreError(.invalid, "must be more than 0 and at most 366 days", field: "window")
        }
    }

    /// The order keys are locked in, the same on every node, so two checks of the same keys
    /// never wait for each other crosswise.
    public static func lockOrder(_ lhs: RateLimitKey, _ rhs: RateLimitKey) -> Bool {
        (lhs.action, lhs.scope, lhs.key) < (rhs.action, rhs.scope, rhs.key)
    }

    public var description: String { "\(action)/\(scope)/\(key) (\(count) per \(window))" }
}
