import Foundation

/// A code described in the words the CLI, the console and the audit log use.
extension PromoCode {
    /// "discount to £0.99" or "unlocks unlimited play".
    public var kindText: String {
        switch kind {
        case .discount(let price): "discount to \(price)"
        case .unlock: "unlocks unlimited play"
        }
    }

    /// When it redeems: "no expiry", "from …", "until …", "… to …".
    public var windowText: String {
        switch (startsAt, expiresAt) {
        case (nil, nil): "no expiry"
        case (let start?, nil): "from \(OperatorActions.timeText(start))"
        case (nil, let end?): "until \(OperatorActions.timeText(end))"
        case (let start?, let end?): "\(OperatorActions.timeText(start)) to \(OperatorActions.timeText(end))"
        }
    }

    public var capText: String {
        maxRedemptions.map { "at most \($0) redemptions" } ?? "no redemption cap"
    }

    /// "live", or why not, at `now`.
    public func status(at now: Date) -> String {
        if disabled { return "disabled" }
        if let start = startsAt, now < start { return "not started" }
        if let end = expiresAt, Int64(now.timeIntervalSince1970.rounded(.down)) > Int64(end.timeIntervalSince1970) { return "expired" }
        if let cap = maxRedemptions, redemptions >= cap { return "fully redeemed" }
        return isLive(at: now) ? "live" : "not live"
    }
}
