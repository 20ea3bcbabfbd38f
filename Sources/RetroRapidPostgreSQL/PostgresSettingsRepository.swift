import Foundation
import RetroRapidDomain

/// Each player's settings document on PostgreSQL (table `player_settings`), versioned against
/// lost updates: only a write based on the current version is stored, as that version plus
/// one; any other is answered `.stale` with what is stored. Input is checked by the domain
/// (``PlayerSettings``, ``VersionedSettings``) before anything is read.
///
/// How the version rule stays exact with many nodes writing at once (READ COMMITTED): a
/// write locks the player's row first (`SELECT … FOR UPDATE`), then reads the version and
/// writes inside that transaction. Two writes based on the same version are serialised: the
/// second reads the first's version and is stale. The UPDATE names the version it replaces
/// (and the first INSERT conflicts on the primary key) as a second guard: if either ever
/// changed nothing, the write is answered stale, never stored over another.
public struct PostgresSettingsRepository: SettingsRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    public func settings(playerID: Int64) throws -> VersionedSettings {
        try Self.current(connection, playerID: playerID)
    }

    public func write(playerID: Int64, document: PlayerSettings, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult {
        try document.validate()
        let basedOnVersion = try VersionedSettings.validatedBaseVersion(basedOnVersion)
        return try store(playerID: playerID, basedOnVersion: basedOnVersion, now: now) { _ in document }
    }

    public func write(playerID: Int64, json: Data, basedOnVersion: Int, now: Date) throws -> SettingsWriteResult {
        let document = try PlayerSettings.decode(json: json, over: .defaults)
        return try write(playerID: playerID, document: document, basedOnVersion: basedOnVersion, now: now)
    }

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
        try connection.transaction { db in
            guard try !db.execute("SELECT 1 FROM players WHERE id = $1 FOR UPDATE", [playerID]).isEmpty else {
                throw VersionedSettings.unknownPlayer(playerID)
            }
            let current = try Self.current(db, playerID: playerID)
            guard current.version == basedOnVersion else { return .stale(current: current) }
            let document = try change(current)
            let json = String(decoding: document.jsonData(), as: UTF8.self)
            let updatedAt = UTCCivilTime.text(now)
            let version = current.version + 1
            let written: PostgresResult
            if current.version == 0 {
                written = try db.execute("""
                    INSERT INTO player_settings (player_id, version, document, updated_at) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (player_id) DO NOTHING
                    """, [playerID, version, json, updatedAt])
            } else {
                written = try db.execute("UPDATE player_settings SET version = $1, document = $2, updated_at = $3 WHERE player_id = $4 AND version = $5",
                                         [version, json, updatedAt, playerID, current.version])
            }
            guard written.affectedRows == 1 else { return .stale(current: try Self.current(db, playerID: playerID)) }
            return .written(VersionedSettings(version: version, settings: document, updatedAt: UTCCivilTime.parse(updatedAt)))
        }
    }

    /// One statement: the player's existence and their row (if any) from one snapshot.
    private static func current(_ db: PostgresConnection, playerID: Int64) throws -> VersionedSettings {
        guard let row = try db.execute("""
            SELECT s.version, s.document, s.updated_at
            FROM players p LEFT JOIN player_settings s ON s.player_id = p.id
            WHERE p.id = $1
            """, [playerID]).first
        else { throw VersionedSettings.unknownPlayer(playerID) }
        guard !row.isNull(at: 0) else { return VersionedSettings(version: 0, settings: .defaults, updatedAt: nil) }
        return try VersionedSettings.stored(version: row.int(at: 0), document: row.string(at: 1), updatedAt: row.string(at: 2),
                                            playerID: playerID)
    }
}
