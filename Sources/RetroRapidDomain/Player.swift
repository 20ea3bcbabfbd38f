import Foundation

/// Someone who plays: owns the plays, settings and scores. No password, no e-mail: a player is
/// reached only through the tokens of their devices (docs/API.md, "Players and devices").
public struct Player: Sendable, Hashable, Identifiable {
    /// The row id: used inside the server only, never shown.
    public let id: Int64
    /// The id shown outside (URLs, leaderboards): 12 characters of ``LinkCode/alphabet``,
    /// random, so it says nothing about how many players there are or when one joined.
    public let publicID: String
    /// Valid by ``DisplayName``'s rules.
    public let displayName: String
    public let createdAt: Date

    package init(id: Int64, publicID: String, displayName: String, createdAt: Date) {
        self.id = id
        self.publicID = publicID
        self.displayName = displayName
        self.createdAt = createdAt
    }
}

/// One device signed in as a player, as the player sees it in their device list.
public struct Device: Sendable, Hashable, Identifiable {
    public let id: Int64
    /// What the client called itself when it signed in, e.g. "Firefox on Linux"; may be empty.
    public let label: String
    public let createdAt: Date
    /// The last successful ``PlayerRepository/authenticate(token:now:)``, or the device's
    /// creation until then. Optional because rows written by other tools may have none.
    public let lastSeenAt: Date?
    /// When the player revoked it; a revoked device's token no longer signs in.
    public let revokedAt: Date?
    /// True for the device that asked for the list ("this device").
    public let isCurrent: Bool

    public var isRevoked: Bool { revokedAt != nil }

    package init(id: Int64, label: String, createdAt: Date, lastSeenAt: Date?, revokedAt: Date?, isCurrent: Bool) {
        self.id = id
        self.label = label
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.revokedAt = revokedAt
        self.isCurrent = isCurrent
    }
}

/// Proof, inside the server, that a request came with a valid device token: only
/// ``PlayerRepository/authenticate(token:now:)`` makes one (its initializer is `package`, for backends).
public struct AuthenticatedDevice: Sendable, Hashable {
    public let player: Player
    public let deviceID: Int64

    package init(player: Player, deviceID: Int64) {
        self.player = player
        self.deviceID = deviceID
    }
}

extension Device {
    /// How long a device label may be, in characters.
    public static let maximumLabelLength = 64

    /// How stale a device's last-seen time may get before a sign-in rewrites it. Every API
    /// request and WebSocket hello signs in; writing each time would cost a durable commit per
    /// request for a value shown to the minute on the devices page.
    public static let lastSeenResolution: TimeInterval = 300

    /// Trims spaces at both ends and refuses what would draw nothing or disturb the text
    /// around it: control and format characters, other spaces than U+0020, unassigned and
    /// private-use code points. Anything visible is fine (emoji too): only its player sees it.
    package static func validatedLabel(_ raw: String) throws -> String {
        let label = DisplayName.trimmingSpaces(raw).precomposedStringWithCanonicalMapping
        let rule = "A device label is up to \(maximumLabelLength) characters of visible text, without control or invisible formatting characters."
        guard label.count <= maximumLabelLength else {
            throw StoreError(.invalid, "The device label is too long (\(label.count) characters). \(rule)", field: "deviceLabel")
        }
        for scalar in label.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate:
                throw StoreError(.invalid, "The device label contains \(DisplayName.codePoint(scalar)). \(rule)", field: "deviceLabel")
            case .spaceSeparator where scalar != " ":
                throw StoreError(.invalid, "The device label contains \(DisplayName.codePoint(scalar)). \(rule)", field: "deviceLabel")
            default:
                continue
            }
        }
        return label
    }
}

extension Device {
    /// Whether a sign-in at `now` rewrites a device's stored `last_seen_at` (ISO-8601 UTC text
    /// as both backends store it, nil when none): when it is at least ``lastSeenResolution``
    /// old. Fixed-width UTC text sorts as time does, so comparing text is enough.
    package static func lastSeenIsStale(_ storedLastSeen: String?, now: Date) -> Bool {
        let staleBefore = UTCCivilTime.text(now.addingTimeInterval(-lastSeenResolution))
        return storedLastSeen.map { $0 <= staleBefore } ?? true
    }

    // The refusals every backend gives about devices, in the same words.

    package static var malformedToken: StoreError {
        StoreError(.unauthorized, "This device token is malformed: a token is \(DeviceToken.textLength) characters of letters, digits, '-' and '_'. Sign in again.")
    }

    package static var unknownToken: StoreError {
        StoreError(.unauthorized, "This device token is unknown. Sign in again, or link this device with a code from another of your devices.")
    }

    package static var revokedToken: StoreError {
        StoreError(.unauthorized, "This device was signed out from another of your devices. Link it again with a code from a device that is still signed in.")
    }

    /// Also for another player's device, which is not revealed to exist.
    package static var unknownDevice: StoreError {
        StoreError(.notFound, "This player has no device with this id.", field: "deviceID")
    }

    package static var lastActiveDevice: StoreError {
        StoreError(.conflict, "This is your only signed-in device. Without it nobody could sign in as you again, so link another device first, then sign this one out.", field: "deviceID")
    }
}
