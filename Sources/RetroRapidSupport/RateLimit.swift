/// "At most `count` in any `window`": how often one client address (or one player) may do one
/// thing, such as create a player or guess a code wrong. Exact over every window of that
/// length, not a bucket that refills (Sources/RetroRapidServer/API/RateLimiter.swift keeps the
/// times). Settings write it `COUNT/SECONDS`: `10/600` is at most 10 in any 10 minutes.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var count: Int
    public var window: Duration

    public init(_ count: Int, per window: Duration) {
        precondition(count >= 1 && window > .zero, "a rate limit allows at least one event per positive window")
        self.count = count
        self.window = window
    }

    /// The largest count and window a setting may give: bounds the memory a limit keeps
    /// (one time per event counted, per client) and keeps the arithmetic far from overflow.
    public static let countRange = 1...100_000
    public static let windowSecondsRange = 1...86_400

    /// `COUNT/SECONDS` (`10/600`), both whole numbers in `countRange` and `windowSecondsRange`;
    /// nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2,
              parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
              let count = Int(parts[0]), let seconds = Int(parts[1]),
              Self.countRange.contains(count), Self.windowSecondsRange.contains(seconds)
        else { return nil }
        self.init(count, per: .seconds(seconds))
    }

    /// `COUNT/SECONDS`, as a setting writes it (a window below a second shows as 0).
    public var description: String {
        "\(count)/\(window.components.seconds)"
    }

    /// For people: "10 in any 10 minutes", "5 in any 30 s".
    public var sentence: String {
        let seconds = window.components.seconds
        let span: String
        if seconds >= 3600, seconds % 3600 == 0 {
            span = seconds == 3600 ? "hour" : "\(seconds / 3600) hours"
        } else if seconds >= 60, seconds % 60 == 0 {
            span = seconds == 60 ? "minute" : "\(seconds / 60) minutes"
        } else {
            span = "\(seconds) s"
        }
        return "\(count) in any \(span)"
    }
}
