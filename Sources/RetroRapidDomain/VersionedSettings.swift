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

extension VersionedSettings {
    /// The version a write names as its base, as every backend accepts it: 0 or more
    /// (`.invalid` on `basedOnVersion` otherwise). Any other version is merely stale.
    package static func validatedBaseVersion(_ version: Int) throws(StoreError) -> Int {
        guard version >= 0 else {
            throw StoreError(.invalid, "must be the version the change was based on: 0 or more, got \(version)", field: "basedOnVersion")
        }
        return version
    }

    /// A stored row read back. Read leniently: a document written by a newer build may hold
    /// fields this one does not know. Anything else wrong with it is damage, not a player's
    /// mistake (`.unreadable`).
    package static func stored(version: Int, document: String, updatedAt: String, playerID: Int64) throws(StoreError) -> VersionedSettings {
        // The next write stores `version + 1`, which would trap at `Int.max`.
        guard version >= 1, version < Int.max else {
            throw StoreError.unreadable("player_settings holds version \(version) for player \(playerID), outside 1 to \(Int.max - 1)")
        }
        let settings: PlayerSettings
        do {
            settings = try PlayerSettings.decodeStored(Data(document.utf8), lenient: true)
            try settings.validate()
        } catch {
            throw StoreError.unreadable("player_settings holds an unreadable document for player \(playerID): \(error)")
        }
        return VersionedSettings(version: version, settings: settings, updatedAt: UTCCivilTime.parse(updatedAt))
    }

    /// The settings repositories' refusal of a player id that names nobody.
    package static func unknownPlayer(_ playerID: Int64) -> StoreError {
        StoreError(.notFound, "no player with id \(playerID)", field: "playerID")
    }
}
