import Foundation
import RetroRapidDomain

/// Players and their devices on PostgreSQL: creating a player with its first device token,
/// signing devices in, display names, listing and revoking devices.
///
/// How each rule stays exact with many nodes writing at once (READ COMMITTED):
/// * a public id or token hash that clashes is drawn again: `INSERT … ON CONFLICT DO NOTHING`
///   says so without aborting the transaction (the last attempt inserts plainly, so a run of
///   clashes fails loudly, as on SQLite);
/// * a sign-in's `last_seen_at` is one conditional UPDATE (`… AND revoked_at IS NULL`), so a
///   revoke that committed first wins;
/// * "never revoke the last active device" locks the player's row first, so two devices
///   revoking each other at once are serialised and the second sees the first's revoke.
///   Link-code claims and creations lock the same row (``PostgresLinkCodeRepository``).
public struct PostgresPlayerRepository: PlayerRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    public func createPlayer(displayName: String?, deviceLabel: String, now: Date) throws -> (player: Player, token: String) {
        let name = try displayName.map { try DisplayName($0) } ?? DisplayName.random()
        let label = try Device.validatedLabel(deviceLabel)
        return try connection.transaction { db in
            // 60 random bits make a clash vanishingly rare, but a clash must not fail sign-up.
            var attempt = 0
            while true {
                attempt += 1
                let publicID = LinkCode.randomSymbols(count: 12)
                let onConflict = attempt < 5 ? "ON CONFLICT (public_id) DO NOTHING" : ""
                guard let row = try db.execute("""
                    INSERT INTO players (public_id, display_name, created_at) VALUES ($1, $2, $3) \(onConflict) RETURNING id
                    """, [publicID, name.value, UTCCivilTime.text(now)]).first else { continue }
                let playerID = row.int64(at: 0)
                let token = try Self.insertDevice(db, playerID: playerID, label: label, now: now).token
                let player = Player(id: playerID, publicID: publicID, displayName: name.value,
                                    createdAt: UTCCivilTime.date(seconds: UTCCivilTime.seconds(now)))
                return (player, token.text)
            }
        }
    }

    public func authenticate(token: String, now: Date) throws -> AuthenticatedDevice {
        // The shape is checked before anything is hashed or looked up.
        guard let token = DeviceToken(parsing: token) else { throw Device.malformedToken }
        guard let found = try connection.execute(
            "SELECT id, player_id, revoked_at IS NOT NULL, last_seen_at FROM devices WHERE token_hash = $1", [token.hash]).first
        else { throw Device.unknownToken }
        guard !found.bool(at: 2) else { throw Device.revokedToken }
        let deviceID = found.int64(at: 0)
        if Device.lastSeenIsStale(found.optionalString(at: 3), now: now) {
            // Re-checked in the write itself: a revoke that committed since the read wins.
            let updated = try connection.execute("UPDATE devices SET last_seen_at = $1 WHERE id = $2 AND revoked_at IS NULL",
                                                 [UTCCivilTime.text(now), deviceID])
            guard updated.affectedRows == 1 else { throw Device.revokedToken }
        }
        return AuthenticatedDevice(player: try Self.readPlayer(connection, id: found.int64(at: 1)), deviceID: deviceID)
    }

    public func player(publicID: String) throws -> Player {
        guard let row = try connection.execute("SELECT id, public_id, display_name, created_at FROM players WHERE public_id = $1",
                                               [publicID.uppercased()]).first
        else { throw StoreError.unknownPlayer(field: "publicID") }
        return try Self.player(row)
    }

    public func player(id: Int64) throws -> Player {
        try Self.readPlayer(connection, id: id)
    }

    @discardableResult
    public func setDisplayName(playerID: Int64, name: String) throws -> Player {
        let name = try DisplayName(name)
        guard let row = try connection.execute(
            "UPDATE players SET display_name = $1 WHERE id = $2 RETURNING id, public_id, display_name, created_at",
            [name.value, playerID]).first
        else { throw StoreError.unknownPlayer(field: "playerID") }
        return try Self.player(row)
    }

    public func devices(playerID: Int64, currentDeviceID: Int64? = nil) throws -> [Device] {
        // One snapshot for both reads, as SQLite's read transaction gives.
        try connection.transaction(.repeatableRead) { db in
            _ = try Self.readPlayer(db, id: playerID)
            return try db.execute("""
                SELECT id, label, created_at, last_seen_at, revoked_at FROM devices
                WHERE player_id = $1 ORDER BY created_at, id
                """, [playerID]).map { row in
                func optionalDate(_ column: Int, _ name: String) throws -> Date? {
                    try row.optionalString(at: column).map { try UTCCivilTime.storedDate($0, column: "devices.\(name)") }
                }
                return Device(id: row.int64(at: 0), label: row.string(at: 1),
                              createdAt: try UTCCivilTime.storedDate(row.string(at: 2), column: "devices.created_at"),
                              lastSeenAt: try optionalDate(3, "last_seen_at"), revokedAt: try optionalDate(4, "revoked_at"),
                              isCurrent: row.int64(at: 0) == currentDeviceID)
            }
        }
    }

    public func revokeDevice(playerID: Int64, deviceID: Int64, now: Date, allowingLastDevice: Bool = false) throws {
        try connection.transaction { db in
            // The player's row first: the count of active devices below stays true until commit.
            // (No refusal here: an unknown player has no such device, and is told so below.)
            try db.execute("SELECT 1 FROM players WHERE id = $1 FOR UPDATE", [playerID])
            guard let device = try db.execute("SELECT revoked_at IS NOT NULL FROM devices WHERE id = $1 AND player_id = $2",
                                              [deviceID, playerID]).first
            else { throw Device.unknownDevice }
            guard !device.bool(at: 0) else { return }
            if !allowingLastDevice {
                let active = try db.execute("SELECT count(*) FROM devices WHERE player_id = $1 AND revoked_at IS NULL", [playerID])
                    .first?.int(at: 0) ?? 0
                guard active > 1 else { throw Device.lastActiveDevice }
            }
            try db.execute("UPDATE devices SET revoked_at = $1 WHERE id = $2 AND player_id = $3 AND revoked_at IS NULL",
                           [UTCCivilTime.text(now), deviceID, playerID])
        }
    }

    // MARK: - Shared with PostgresLinkCodeRepository

    /// Adds a device to `playerID` with a fresh token, inside the caller's transaction, and
    /// returns its id and token.
    static func insertDevice(_ db: PostgresConnection, playerID: Int64, label: String, now: Date) throws -> (id: Int64, token: DeviceToken) {
        let token = DeviceToken.generate()
        let row = try db.execute("""
            INSERT INTO devices (player_id, token_hash, label, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4) RETURNING id
            """, [playerID, token.hash, label, UTCCivilTime.text(now)]).first
        guard let row else { throw StoreError.unreadable("devices returned no id for the row just inserted") }
        return (row.int64(at: 0), token)
    }

    static func readPlayer(_ db: PostgresConnection, id: Int64) throws -> Player {
        guard let row = try db.execute("SELECT id, public_id, display_name, created_at FROM players WHERE id = $1", [id]).first
        else { throw StoreError.unknownPlayer(field: "playerID") }
        return try player(row)
    }

    private static func player(_ row: PostgresRow) throws -> Player {
        Player(id: row.int64(at: 0), publicID: row.string(at: 1), displayName: row.string(at: 2),
               createdAt: try UTCCivilTime.storedDate(row.string(at: 3), column: "players.created_at"))
    }
}
