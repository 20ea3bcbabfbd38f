import Foundation
import RetroRapidDomain

/// Players and their devices, on either backend: creating a player with its first device
/// token, signing devices in, display names, listing and revoking devices. (Joining a second
/// device goes through ``SQLLinkCodeRepository``.) A refusal throws ``StoreError`` before or
/// inside the transaction, so a refused request changes nothing. Times are stored as ISO-8601
/// UTC text to the second (`2026-01-15T10:23:45Z`), the fraction dropped.
///
/// How each rule stays exact with many writers at once (on SQLite the one write lock
/// serialises them; on PostgreSQL, at READ COMMITTED, the following do):
/// * a public id or token hash that clashes is drawn again: `INSERT … ON CONFLICT DO NOTHING`
///   says so without aborting the transaction (the last attempt inserts plainly, so a run of
///   clashes fails loudly);
/// * a sign-in's `last_seen_at` is one conditional UPDATE (`… AND revoked_at IS NULL`), so a
///   revoke that committed first wins;
/// * "never revoke the last active device" locks the player's row first, so two devices
///   revoking each other at once are serialised and the second sees the first's revoke.
///   Link-code claims and creations lock the same row.
public struct SQLPlayerRepository: PlayerRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// Creates a player and their first device, and returns the device token: the only time it
    /// exists outside the client, since only its SHA-256 is stored.
    ///
    /// - Parameters:
    ///   - displayName: validated by ``DisplayName``; nil picks one like "Racer 4821".
    ///   - deviceLabel: what the device calls itself; see ``Device/maximumLabelLength``.
    /// - Throws: `StoreError(.invalid)` for a bad name (`field: "displayName"`) or label
    ///   (`field: "deviceLabel"`).
    public func createPlayer(displayName: String?, deviceLabel: String, now: Date) throws -> (player: Player, token: String) {
        let name = try displayName.map { try DisplayName($0) } ?? DisplayName.random()
        let label = try Device.validatedLabel(deviceLabel)
        return try executor.writeTransaction {
            // 60 random bits make a clash vanishingly rare, but a clash must not fail sign-up.
            var attempt = 0
            while true {
                attempt += 1
                let publicID = LinkCode.randomSymbols(count: 12)
                let onConflict = attempt < 5 ? "ON CONFLICT (public_id) DO NOTHING" : ""
                guard let row = try executor.query("""
                    INSERT INTO players (public_id, display_name, created_at) VALUES ($1, $2, $3) \(onConflict) RETURNING id
                    """, [publicID, name.value, UTCCivilTime.text(now)]).first else { continue }
                let playerID = try row.int64("id")
                let token = try Self.insertDevice(executor, playerID: playerID, label: label, now: now).token
                let player = Player(id: playerID, publicID: publicID, displayName: name.value,
                                    createdAt: UTCCivilTime.date(seconds: UTCCivilTime.seconds(now)))
                return (player, token.text)
            }
        }
    }

    /// Signs a device in with the token it presents, and records that it was seen (at most
    /// once per `Device.lastSeenResolution`, so most sign-ins are a read only).
    ///
    /// - Throws: `StoreError(.unauthorized)` for a malformed, unknown or revoked token.
    public func authenticate(token: String, now: Date) throws -> AuthenticatedDevice {
        // The shape is checked before anything is hashed or looked up.
        guard let token = DeviceToken(parsing: token) else { throw Device.malformedToken }
        guard let found = try executor.query(
            "SELECT id, player_id, revoked_at IS NOT NULL AS revoked, last_seen_at FROM devices WHERE token_hash = $1", [token.hash]).first
        else { throw Device.unknownToken }
        guard try !found.bool("revoked") else { throw Device.revokedToken }
        let deviceID = try found.int64("id")
        if Device.lastSeenIsStale(try found.optionalString("last_seen_at"), now: now) {
            // Re-checked in the write itself: a revoke that committed since the read wins.
            let updated = try executor.query("UPDATE devices SET last_seen_at = $1 WHERE id = $2 AND revoked_at IS NULL",
                                             [UTCCivilTime.text(now), deviceID])
            guard updated.affectedRows == 1 else { throw Device.revokedToken }
        }
        return AuthenticatedDevice(player: try Self.readPlayer(executor, id: try found.int64("player_id")), deviceID: deviceID)
    }

    /// The player with this public id (case-insensitive, as the alphabet is).
    /// - Throws: `StoreError(.notFound)`.
    public func player(publicID: String) throws -> Player {
        guard let row = try executor.query("SELECT id, public_id, display_name, created_at FROM players WHERE public_id = $1",
                                           [publicID.uppercased()]).first
        else { throw StoreError.unknownPlayer(field: "publicID") }
        return try Self.player(row)
    }

    /// The player with this row id.
    /// - Throws: `StoreError(.notFound)`.
    public func player(id: Int64) throws -> Player {
        try Self.readPlayer(executor, id: id)
    }

    /// The players an operator's search finds (``PlayerRepository/search(_:limit:)``). The
    /// display name is compared without an index: a search an operator types, not a hot path.
    public func search(_ text: String, limit: Int) throws -> [Player] {
        guard (1...100).contains(limit) else { throw StoreError(.invalid, "A search returns 1 to 100 players.", field: "limit") }
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.count <= 200 else { return [] }
        // A number that is not a device id matches nothing; one too large for a row id is not one.
        let deviceID = Int64(text) ?? 0
        return try executor.query("""
            SELECT id, public_id, display_name, created_at FROM players
            WHERE public_id = $1 OR lower(display_name) = lower($2)
               OR id IN (SELECT player_id FROM devices WHERE id = $3)
            ORDER BY id LIMIT $4
            """, [text.uppercased(), text, deviceID, Int64(limit)]).rows.map(Self.player)
    }

    /// Changes a player's display name and returns the player as now stored.
    ///
    /// (It takes no `now`: the players table keeps no time of the last change, and a
    /// parameter that is ignored would only mislead.)
    /// - Throws: `StoreError(.invalid, field: "displayName")`, `StoreError(.notFound)`.
    @discardableResult
    public func setDisplayName(playerID: Int64, name: String) throws -> Player {
        let name = try DisplayName(name)
        guard let row = try executor.query(
            "UPDATE players SET display_name = $1 WHERE id = $2 RETURNING id, public_id, display_name, created_at",
            [name.value, playerID]).first
        else { throw StoreError.unknownPlayer(field: "playerID") }
        return try Self.player(row)
    }

    /// A player's devices, oldest first, revoked ones included (marked) so the player can see
    /// what was signed out and when.
    ///
    /// - Parameter currentDeviceID: the device asking, marked ``Device/isCurrent``; nil when
    ///   no device asks (the operator's CLI).
    /// - Throws: `StoreError(.notFound)` for an unknown player.
    public func devices(playerID: Int64, currentDeviceID: Int64? = nil) throws -> [Device] {
        try executor.readTransaction {
            _ = try Self.readPlayer(executor, id: playerID)
            return try executor.query("""
                SELECT id, label, created_at, last_seen_at, revoked_at FROM devices
                WHERE player_id = $1 ORDER BY created_at, id
                """, [playerID]).rows.map { row in
                func optionalDate(_ name: String) throws -> Date? {
                    try row.optionalString(name).map { try UTCCivilTime.storedDate($0, column: "devices.\(name)") }
                }
                let id = try row.int64("id")
                return Device(id: id, label: try row.string("label"),
                              createdAt: try UTCCivilTime.storedDate(row.string("created_at"), column: "devices.created_at"),
                              lastSeenAt: try optionalDate("last_seen_at"), revokedAt: try optionalDate("revoked_at"),
                              isCurrent: id == currentDeviceID)
            }
        }
    }

    /// Signs one of a player's devices out for good: its token stops working at once, and link
    /// codes it created and nobody claimed yet stop working too. Revoking a device already
    /// revoked changes nothing and succeeds.
    ///
    /// The last active device is refused by default (`StoreError(.conflict)`): a player has no
    /// password or e-mail, so with no device left nobody could ever sign in as them again, and
    /// their scores and any unlimited play they paid for would be lost. A player who wants a
    /// device gone links another first. The operator's CLI passes `allowingLastDevice: true` for
    /// a stolen only device, where locking the thief out is worth losing the player.
    ///
    /// - Throws: `StoreError(.notFound)` when the player has no device with this id, including a
    ///   device that belongs to someone else (never revoked, and not revealed to exist);
    ///   `StoreError(.conflict)` for the last active device.
    public func revokeDevice(playerID: Int64, deviceID: Int64, now: Date, allowingLastDevice: Bool = false) throws {
        try executor.writeTransaction {
            // The player's row first: the count of active devices below stays true until commit.
            // (No refusal here: an unknown player has no such device, and is told so below.)
            try SQLPlayerLookup.lockPlayer(playerID, in: executor)
            guard let device = try executor.query("SELECT revoked_at IS NOT NULL AS revoked FROM devices WHERE id = $1 AND player_id = $2",
                                                  [deviceID, playerID]).first
            else { throw Device.unknownDevice }
            guard try !device.bool("revoked") else { return }
            if !allowingLastDevice {
                let active = try executor.query("SELECT count(*) AS active FROM devices WHERE player_id = $1 AND revoked_at IS NULL", [playerID])
                    .first?.int("active") ?? 0
                guard active > 1 else { throw Device.lastActiveDevice }
            }
            try executor.query("UPDATE devices SET revoked_at = $1 WHERE id = $2 AND player_id = $3 AND revoked_at IS NULL",
                               [UTCCivilTime.text(now), deviceID, playerID])
        }
    }

    // MARK: - Shared with SQLLinkCodeRepository

    /// Adds a device to `playerID` with a fresh token, inside the caller's transaction, and
    /// returns its id and token.
    static func insertDevice(_ db: any SQLExecutor, playerID: Int64, label: String, now: Date) throws -> (id: Int64, token: DeviceToken) {
        let token = DeviceToken.generate()
        let row = try db.query("""
            INSERT INTO devices (player_id, token_hash, label, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4) RETURNING id
            """, [playerID, token.hash, label, UTCCivilTime.text(now)]).first
        guard let row else { throw StoreError.unreadable("devices returned no id for the row just inserted") }
        return (try row.int64("id"), token)
    }

    static func readPlayer(_ db: any SQLExecutor, id: Int64) throws -> Player {
        guard let row = try db.query("SELECT id, public_id, display_name, created_at FROM players WHERE id = $1", [id]).first
        else { throw StoreError.unknownPlayer(field: "playerID") }
        return try player(row)
    }

    private static func player(_ row: SQLRow) throws -> Player {
        Player(id: try row.int64("id"), publicID: try row.string("public_id"), displayName: try row.string("display_name"),
               createdAt: try UTCCivilTime.storedDate(row.string("created_at"), column: "players.created_at"))
    }
}
