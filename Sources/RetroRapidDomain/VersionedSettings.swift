import Foundation

/// A player's settings document with its version: what a client holds and sends back as the
/// version its next write is based on.
public struct VersionedSettings: Equatable, Sendable, Encodable {
    /// 0 for a player who never saved settings (the document is then the defaults); 1 after the
    /// first write, and one more after every write.
    public var version: Int
    public var settings: PlayerSettings
    /// When the stored document was last written; nil at version 0.
    public var updatedAt: Date?

    public init(version: Int, settings: PlayerSettings, updatedAt: Date?) {
        self.version = version
        self.settings = settings
        self.updatedAt = updatedAt
    }

    /// `{"settings":{…},"updatedAt":"2026-01-15T10:23:45Z","version":3}`, keys sorted
    /// (`updatedAt` is null at version 0): the body the server sends over HTTP and WebSocket.
    public func jsonData() -> Data {
        do {
            return try SettingsJSON.encoder.encode(self)
        } catch {
            preconditionFailure("VersionedSettings failed to encode: \(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: SettingsJSON.Key.self)
        try c.encode(settings, forKey: .init("settings"))
        try c.encode(updatedAt.map(UTCCivilTime.text), forKey: .init("updatedAt"))
        try c.encode(version, forKey: .init("version"))
    }
}

/// What a settings write did. A stale write is an expected outcome (two devices editing at
/// once), not a failure: the caller must show the player the current document, so it comes
/// back with the refusal (the server answers 412 with it).
public enum SettingsWriteResult: Equatable, Sendable {
    /// Stored, with the new version.
    case written(VersionedSettings)
    /// Refused because the write was based on another version than the stored one; nothing
    /// changed. `current` is what is stored now.
    case stale(current: VersionedSettings)
}

extension PlayerSettings {
    /// A stored settings document read back, for backends: `lenient` skips fields a newer build
    /// wrote; anything else wrong throws.
    package static func decodeStored(_ data: Data, lenient: Bool) throws(StoreError) -> PlayerSettings {
        try SettingsJSON.decode(data, over: .defaults, lenient: lenient)
    }
}
