import Foundation
import RetroRapidDomain

/// Each player's settings document (table `player_settings`), on either backend.
///
/// Versions guard against lost updates: every write names the version it was based on, and
/// only a write based on the current version is stored, as that version plus one; any other
/// is answered `.stale` with what is stored. Version 0 means "nothing stored": the defaults are
/// returned, and the first write must be based on 0. Input is checked by the domain
/// (``PlayerSettings``, ``VersionedSettings``) before anything is read: a field out of range,
/// an unknown field or choice, a bad key binding is `StoreError.invalid` naming the field. An
/// unknown player is `StoreError.notFound`.
///
/// How the version rule stays exact with many writers at once: a write locks the player's row
/// first (PostgreSQL: `SELECT … FOR UPDATE`; SQLite: its IMMEDIATE transaction already holds
/// the one write lock), then reads the version and writes inside that transaction. Two writes
/// based on the same version are serialised: the second reads the first's version and is
/// stale. The UPDATE names the version it replaces (and the first INSERT conflicts on the
/// primary key) as a second guard: if either ever changed nothing, the write is answered
/// stale, never stored over another. Race tests: `PostgresSettingsRaceTests`.
public struct SQLSettingsRepository: SettingsRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// The player's stored settings, or the defaults at version 0.
    public func settings(playerID: Int64) throws -> VersionedSettings {
        try read(playerID: playerID)
    }

    /// Stores `document` if `basedOnVersion` is the current version.
    public func write(playerID: Int64, document: PlayerSettings, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult {
        try document.validate()
        let basedOnVersion = try VersionedSettings.validatedBaseVersion(basedOnVersion)
        return try store(playerID: playerID, basedOnVersion: basedOnVersion, now: now) { _ in document }
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
        let basedOnVersion = try VersionedSettings.validatedBaseVersion(basedOnVersion)
        return try store(playerID: playerID, basedOnVersion: basedOnVersion, now: now) { current in
            try PlayerSettings.decode(json: json, over: current.settings)
        }
    }

    // MARK: - Inside the transaction

    private func store(playerID: Int64, basedOnVersion: Int, now: Date,
                       _ change: (VersionedSettings) throws -> PlayerSettings) throws -> SettingsWriteResult {
        try executor.writeTransaction {
            guard try SQLPlayerLookup.lockPlayer(playerID, in: executor) else {
                throw VersionedSettings.unknownPlayer(playerID)
            }
            let current = try read(playerID: playerID)
            guard current.version == basedOnVersion else { return .stale(current: current) }
            let document = try change(current)
            let json = String(decoding: document.jsonData(), as: UTF8.self)
            let updatedAt = UTCCivilTime.text(now)
            let version = current.version + 1
            let written: SQLResult
            if current.version == 0 {
                written = try executor.query("""
                    INSERT INTO player_settings (player_id, version, document, updated_at) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (player_id) DO NOTHING
                    """, [playerID, version, json, updatedAt])
            } else {
                written = try executor.query("UPDATE player_settings SET version = $1, document = $2, updated_at = $3 WHERE player_id = $4 AND version = $5",
                                             [version, json, updatedAt, playerID, current.version])
            }
            guard written.affectedRows == 1 else { return .stale(current: try read(playerID: playerID)) }
            return .written(VersionedSettings(version: version, settings: document, updatedAt: UTCCivilTime.parse(updatedAt)))
        }
    }

    /// One statement: the player's existence and their row (if any) from one snapshot.
    private func read(playerID: Int64) throws -> VersionedSettings {
        guard let row = try executor.query("""
            SELECT s.version AS version, s.document AS document, s.updated_at AS updated_at
            FROM players p LEFT JOIN player_settings s ON s.player_id = p.id
            WHERE p.id = $1
            """, [playerID]).first
        else { throw VersionedSettings.unknownPlayer(playerID) }
        guard try !row.isNull("version") else { return VersionedSettings(version: 0, settings: .defaults, updatedAt: nil) }
        return try VersionedSettings.stored(version: row.int("version"), document: row.string("document"),
                                            updatedAt: row.string("updated_at"), playerID: playerID)
    }
}
