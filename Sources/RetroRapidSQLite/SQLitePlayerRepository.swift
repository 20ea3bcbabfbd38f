import Foundation
import RetroRapidDomain

/// Players and their devices: creating a player with its first device token, signing devices
/// in, display names, listing and revoking devices. (Joining a second device goes through
/// ``LinkCodeRepository``.)
///
/// Every write runs in one IMMEDIATE transaction; a refusal throws ``StoreError`` before or
/// inside it, so a refused request changes nothing. `DatabaseError` escapes only for real
/// database failures. Times come in as `now` and are stored as ISO-8601 UTC text to the
/// second (`2026-01-15T10:23:45Z`), the fraction dropped.
public struct SQLitePlayerRepository: PlayerRepository {
    public let database: Database

    public init(database: Database) {
        self.database = database
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
        return try database.transaction(.immediate) { db in
            let insert = try db.prepare("INSERT INTO players (public_id, display_name, created_at) VALUES (?, ?, ?)")
            // 60 random bits make a clash vanishingly rare, but a clash must not fail sign-up.
            var attempt = 0
            var publicID: String
            while true {
                attempt += 1
                publicID = LinkCode.randomSymbols(count: 12)
                do {
                    try insert.execute([publicID, name.value, Self.timestamp(now)])
                    break
                } catch let error as DatabaseError where error.isUniqueViolation && attempt < 5 {
                    continue
                }
            }
            let playerID = db.lastInsertRowID
            let token = try Self.insertDevice(db, playerID: playerID, label: label, now: now)
            let player = Player(id: playerID, publicID: publicID, displayName: name.value, createdAt: Self.storedDate(now))
            return (player, token.text)
        }
    }

    /// Signs a device in with the token it presents, and records that it was seen (at most
    /// once per `Device.lastSeenResolution`, so most sign-ins are a read only).
    ///
    /// - Throws: `StoreError(.unauthorized)` for a malformed, unknown or revoked token.
    public func authenticate(token: String, now: Date) throws -> AuthenticatedDevice {
        // The shape is checked before anything is hashed or looked up.
        guard let token = DeviceToken(parsing: token) else {
            throw Device.malformedToken
        }
        let hash = token.hash
        let found = try database.prepare("SELECT id, player_id, revoked_at IS NOT NULL, last_seen_at FROM devices WHERE token_hash = ?")
            .query([hash]) { (deviceID: $0.int64(at: 0), playerID: $0.int64(at: 1), isRevoked: $0.bool(at: 2),
                              lastSeen: $0.isNull(at: 3) ? nil : $0.string(at: 3)) }
            .first
        guard let found else {
            throw Device.unknownToken
        }
        guard !found.isRevoked else {
            throw Device.revokedToken
        }
        if Device.lastSeenIsStale(found.lastSeen, now: now) {
            try database.transaction(.immediate) { db in
                // Re-checked inside the write: a revoke that landed since the read wins.
                try db.prepare("UPDATE devices SET last_seen_at = ? WHERE id = ? AND revoked_at IS NULL")
                    .execute([Self.timestamp(now), found.deviceID])
                guard db.changes == 1 else {
                    throw Device.revokedToken
                }
            }
        }
        return AuthenticatedDevice(player: try Self.readPlayer(database, id: found.playerID), deviceID: found.deviceID)
    }

    /// The player with this public id (case-insensitive, as the alphabet is).
    /// - Throws: `StoreError(.notFound)`.
    public func player(publicID: String) throws -> Player {
        let rows = try database.prepare("SELECT id, public_id, display_name, created_at FROM players WHERE public_id = ?")
            .query([publicID.uppercased()], Self.player(row:))
        guard let player = rows.first else {
            throw StoreError.unknownPlayer(field: "publicID")
        }
        return player
    }

    /// The player with this row id.
    /// - Throws: `StoreError(.notFound)`.
    public func player(id: Int64) throws -> Player {
        try Self.readPlayer(database, id: id)
    }

    /// Changes a player's display name and returns the player as now stored.
    ///
    /// (It takes no `now`: the players table keeps no time of the last change, and a
    /// parameter that is ignored would only mislead.)
    /// - Throws: `StoreError(.invalid, field: "displayName")`, `StoreError(.notFound)`.
    @discardableResult
    public func setDisplayName(playerID: Int64, name: String) throws -> Player {
        let name = try DisplayName(name)
        return try database.transaction(.immediate) { db in
            try db.prepare("UPDATE players SET display_name = ? WHERE id = ?").execute([name.value, playerID])
            guard db.changes == 1 else {
                throw StoreError.unknownPlayer(field: "playerID")
            }
            return try Self.readPlayer(db, id: playerID)
        }
    }

    /// A player's devices, oldest first, revoked ones included (marked) so the player can see
    /// what was signed out and when.
    ///
    /// - Parameter currentDeviceID: the device asking, marked ``Device/isCurrent``; nil when
    ///   no device asks (the operator's CLI).
    /// - Throws: `StoreError(.notFound)` for an unknown player.
    public func devices(playerID: Int64, currentDeviceID: Int64? = nil) throws -> [Device] {
        try database.transaction(.deferred) { db in
            _ = try Self.readPlayer(db, id: playerID)
            return try db.prepare("""
                SELECT id, label, created_at, last_seen_at, revoked_at FROM devices
                WHERE player_id = ? ORDER BY created_at, id
                """).query([playerID]) { row in
                Device(
                    id: row.int64(at: 0),
                    label: row.string(at: 1),
                    createdAt: try Self.date(row.string(at: 2), column: "devices.created_at"),
                    lastSeenAt: row.isNull(at: 3) ? nil : try Self.date(row.string(at: 3), column: "devices.last_seen_at"),
                    revokedAt: row.isNull(at: 4) ? nil : try Self.date(row.string(at: 4), column: "devices.revoked_at"),
                    isCurrent: row.int64(at: 0) == currentDeviceID
                )
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
        try database.transaction(.immediate) { db in
            let isRevoked = try db.prepare("SELECT revoked_at IS NOT NULL FROM devices WHERE id = ? AND player_id = ?")
                .query([deviceID, playerID]) { $0.bool(at: 0) }
                .first
            guard let isRevoked else {
                throw Device.unknownDevice
            }
            guard !isRevoked else { return }
            if !allowingLastDevice {
                let active = try db.prepare("SELECT count(*) FROM devices WHERE player_id = ? AND revoked_at IS NULL")
                    .query([playerID]) { $0.int(at: 0) }.first ?? 0
                guard active > 1 else {
                    throw Device.lastActiveDevice
                }
            }
            try db.prepare("UPDATE devices SET revoked_at = ? WHERE id = ? AND player_id = ? AND revoked_at IS NULL")
                .execute([Self.timestamp(now), deviceID, playerID])
        }
    }
}

// MARK: - Shared with SQLiteLinkCodeRepository

extension SQLitePlayerRepository {
    /// Adds a device to `playerID` with a fresh token and returns the token. Runs inside the
    /// caller's transaction.
    static func insertDevice(_ db: Database, playerID: Int64, label: String, now: Date) throws -> DeviceToken {
        let token = DeviceToken.generate()
        try db.prepare("INSERT INTO devices (player_id, token_hash, label, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)")
            .execute([playerID, token.hash, label, timestamp(now), timestamp(now)])
        return token
    }

    static func readPlayer(_ db: Database, id: Int64) throws -> Player {
        let rows = try db.prepare("SELECT id, public_id, display_name, created_at FROM players WHERE id = ?")
            .query([id], player(row:))
        guard let player = rows.first else { throw StoreError.unknownPlayer(field: "playerID") }
        return player
    }


    private static func player(row: Statement) throws -> Player {
        Player(
            id: row.int64(at: 0),
            publicID: row.string(at: 1),
            displayName: row.string(at: 2),
            createdAt: try date(row.string(at: 3), column: "players.created_at")
        )
    }

    // MARK: Times: ISO-8601 UTC text, whole seconds

    private static let timeStyle = Date.ISO8601FormatStyle(timeZone: .gmt)

    /// `now` as stored: whole seconds, so what is returned equals what is read back.
    static func storedDate(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    /// `2026-01-15T10:23:45Z`. Fixed width, so text order is time order in SQL comparisons.
    static func timestamp(_ date: Date) -> String {
        storedDate(date).formatted(timeStyle)
    }

    /// Reads a stored time; a malformed one is a damaged database, not a refusal.
    static func date(_ text: String, column: String) throws -> Date {
        guard let date = try? timeStyle.parse(text) else {
            throw StoreError.unreadable("\(column) holds '\(text)', which is not an ISO-8601 UTC time")
        }
        return date
    }
}
