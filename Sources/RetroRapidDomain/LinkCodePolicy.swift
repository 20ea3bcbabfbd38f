import Foundation

/// How long link codes live and how many a player may create (``LinkCodeRepository``).
public struct LinkCodePolicy: Sendable, Hashable {
    /// How long a code works after it is created (whole seconds count; at least 1).
    public let lifetime: TimeInterval
    /// How many codes one player may create within ``window``.
    public let maximumPerWindow: Int
    public let window: TimeInterval

    public init(lifetime: TimeInterval = 10 * 60, maximumPerWindow: Int = 5, window: TimeInterval = 10 * 60) {
        precondition(lifetime >= 1 && maximumPerWindow >= 1 && window >= 1, "link code lifetime, window and maximum must be positive")
        self.lifetime = lifetime
        self.maximumPerWindow = maximumPerWindow
        self.window = window
    }
}

extension LinkCodePolicy {
    /// Claimed and expired codes are deleted this long after they expire. Until then, entering
    /// one says "used" or "expired" rather than "unknown".
    package static let retention: TimeInterval = 24 * 60 * 60

    /// Seconds until the player may create another code (at least 1), or nil when they may now.
    /// - Parameter recent: the player's codes created within ``window`` before `now`, newest
    ///   first, at most ``maximumPerWindow`` of them (what each backend reads).
    package func retryAfter(recent: [Date], now: Date) -> TimeInterval? {
        guard recent.count >= maximumPerWindow, let oldestCounted = recent.last else { return nil }
        return max(1, oldestCounted.addingTimeInterval(window).timeIntervalSince(now).rounded(.up))
    }

    /// "10 minutes", "1 minute", "45 seconds": rounded up to whole minutes from a minute on.
    package static func duration(_ seconds: TimeInterval) -> String {
        let whole = Int(max(1, seconds.rounded(.up)))
        if whole < 60 { return whole == 1 ? "1 second" : "\(whole) seconds" }
        let minutes = (whole + 59) / 60
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }

    // The refusals every backend gives about link codes, in the same words.

    package func tooManyCodes(retryAfter wait: TimeInterval) -> StoreError {
        StoreError(.rateLimited, "You created \(maximumPerWindow) link codes in the last \(Self.duration(window)), the most allowed. Try again in \(Self.duration(wait)).")
    }

    package var expiredCode: StoreError {
        StoreError(.expired, "This link code has expired: codes work for \(Self.duration(lifetime)). Create a new one on your other device.", field: "code")
    }

    package static var signedOutCreator: StoreError {
        StoreError(.unauthorized, "This device was signed out, so it cannot create link codes. Link it again from a device that is still signed in.")
    }

    package static var malformedCode: StoreError {
        StoreError(.invalid, "A link code is \(LinkCode.length) letters and digits, shown like K7Q4-M2XD on your other device; dashes, spaces and case do not matter.", field: "code")
    }

    package static var unknownCode: StoreError {
        StoreError(.notFound, "No link code matches. Check it against the one on your other device, or create a new one there.", field: "code")
    }

    package static var usedCode: StoreError {
        StoreError(.expired, "This link code was already used: each code works only once. Create a new one on your other device.", field: "code")
    }

    package static var revokedCreator: StoreError {
        StoreError(.expired, "The device that created this link code was signed out, so the code no longer works. Create a new one on a device that is still signed in.", field: "code")
    }
}
