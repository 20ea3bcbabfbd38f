import Foundation
import RetroRapidDomain

/// Reads and writes each player's settings document (table `player_settings`).
///
/// Versions guard against lost updates: every write names the version it was based on, and
/// only a write based on the current version is stored, with the version plus one. Version 0
/// means "nothing stored": the defaults are returned, and the first write must be based on 0.
///
/// Invalid input (a field out of range, an unknown field or choice, a bad key binding) is
/// refused with `StoreError.invalid` naming the field, before anything is read or written.
/// An unknown player is `StoreError.notFound`. `DatabaseError` means a real failure.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteSettingsRepository: SettingsRepository {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// The player's stored settings, or the defaults at version 0.
    public func settings(playerID: Int64) throws -> VersionedSettings {
        try database.transaction(.deferred) { db in try current(db, playerID: playerID) }
    }

    /// Stores `document` if `basedOnVersion` is the current version.
    public func write(playerID: Int64, document: PlayerSettings, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult {
        try document.validate()
        _ = try VersionedSettings.validatedBaseVersion(basedOnVersion)
        return try database.transaction(.immediate) { db in
            try store(db, playerID: playerID, basedOnVersion: basedOnVersion, now: now) { _ in document }
        }
    }

    /// Stores a whole document sent as JSON: fields left out take their default value.
    public func write(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult {
        let document = try PlayerSettings.decode(json: json, over: .defaults)
        return try write(playerID: playerID, document: document, basedOnVersion: basedOnVersion, now: now)
    }

    /// Changes only the fields present in `json` (nested objects too, e.g.
    /// `{"controls":{"keyBindings":{"pause":"Space"}}}`), keeping the others as stored.
    /// The patch is refused as a whole if any field in it is invalid or if the merged
    /// document is (a key binding clashing with one kept from the stored document).
    public func patch(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult {
        // Checked against the defaults first, so that a bad patch is refused as invalid
        // whatever the stored version; the real merge happens in the transaction.
        _ = try PlayerSettings.decodeStored(json, lenient: false)
        _ = try VersionedSettings.validatedBaseVersion(basedOnVersion)
        return try database.transaction(.immediate) { db in
            try store(db, playerID: playerID, basedOnVersion: basedOnVersion, now: now) { current in
                try PlayerSettings.decode(json: json, over: current.settings)
            }
        }
    }

    // MARK: - Inside transactions

    private func store(
        _ db: Database, playerID: Int64, basedOnVersion: Int, now: Date,
        _ change: (VersionedSettings) throws -> PlayerSettings
    ) throws -> SettingsWriteResult {
        let current = try current(db, playerID: playerID)
        guard current.version == basedOnVersion else { return .stale(current: current) }
        let document = try change(current)
        let json = String(decoding: document.jsonData(), as: UTF8.self)
        let updatedAt = UTCCivilTime.text(now)
        let version = current.version + 1
        if current.version == 0 {
            try db.prepare("INSERT INTO player_settings (player_id, version, document, updated_at) VALUES (?, ?, ?, ?)")
                .execute([playerID, version, json, updatedAt])
        } else {
            try db.prepare("UPDATE player_settings SET version = ?, document = ?, updated_at = ? WHERE player_id = ? AND version = ?")
                .execute([version, json, updatedAt, playerID, current.version])
        }
        return .written(VersionedSettings(version: version, settings: document, updatedAt: UTCCivilTime.parse(updatedAt)))
    }

    private func current(_ db: Database, playerID: Int64) throws -> VersionedSettings {
        let rows = try db.prepare("""
            SELECT s.version, s.document, s.updated_at
            FROM players p LEFT JOIN player_settings s ON s.player_id = p.id
            WHERE p.id = ?
            """).query([playerID]) { row in
                row.isNull(at: 0) ? nil : (row.int(at: 0), row.string(at: 1), row.string(at: 2))
            }
        guard let row = rows.first else {
            throw VersionedSettings.unknownPlayer(playerID)
        }
        guard let (version, document, updatedAt) = row else {
            return VersionedSettings(version: 0, settings: .defaults, updatedAt: nil)
        }
        return try VersionedSettings.stored(version: version, document: document, updatedAt: updatedAt, playerID: playerID)
    }
}
