import Foundation
import RetroRapidDomain

/// Link codes: how a player's second device joins them (docs/API.md, "Players and devices").
///
/// A signed-in device creates a code; another device enters it and gets a device token of its
/// own for the same player. A code works once and only for ``LinkCodePolicy/lifetime``; a player may
/// create at most ``LinkCodePolicy/maximumPerWindow`` codes per ``LinkCodePolicy/window``, which bounds how
/// many live codes a stolen device could spray around.
///
/// Codes are stored as SHA-256 of their normalised symbols, not as text: the code is a bearer
/// credential while it lives, and a hash keeps it out of backups, CLI dumps and anyone's view
/// of the table. It would not stop an offline search of 40 bits; the few minutes a code lives
/// and its single use are what bound that risk. Guessing codes online (2⁴⁰ of them) is for the
/// server's per-connection rate limits to stop.
///
/// Writes run in IMMEDIATE transactions, so two devices claiming one code at the same moment,
/// even on two connections, are serialised: exactly one gets a token, the other is told the
/// code was already used.
public struct SQLiteLinkCodeRepository: LinkCodeRepository {
    public let database: Database
    public let policy: LinkCodePolicy

    public init(database: Database, policy: LinkCodePolicy = LinkCodePolicy()) {
        self.database = database
        self.policy = policy
    }

    /// Creates a code for `device`'s player, valid for ``LinkCodePolicy/lifetime`` from `now`.
    ///
    /// - Throws: `StoreError(.unauthorized)` when the device has since been revoked;
    ///   `StoreError(.rateLimited)` when the player created too many codes lately (the message
    ///   says when to try again; ``retryAfter(playerID:now:)`` gives the seconds for a
    ///   `Retry-After` header).
    public func createCode(for device: AuthenticatedDevice, now: Date) throws -> IssuedLinkCode {
        let playerID = device.player.id
        return try database.transaction(.immediate) { db in
            let isActive = try db.prepare("SELECT 1 FROM devices WHERE id = ? AND player_id = ? AND revoked_at IS NULL")
                .query([device.deviceID, playerID]) { _ in true }.first ?? false
            guard isActive else {
                throw LinkCodePolicy.signedOutCreator
            }
            if let wait = try retryAfter(db, playerID: playerID, now: now) {
                throw policy.tooManyCodes(retryAfter: wait)
            }
            try db.prepare("DELETE FROM link_codes WHERE player_id = ? AND expires_at < ?")
                .execute([playerID, SQLitePlayerRepository.timestamp(now.addingTimeInterval(-LinkCodePolicy.retention))])

            let insert = try db.prepare("""
                INSERT INTO link_codes (player_id, created_by_device_id, code_hash, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?)
                """)
            let expiresAt = SQLitePlayerRepository.storedDate(now.addingTimeInterval(policy.lifetime))
            var attempt = 0
            while true {
                attempt += 1
                // A clash with another code (live, or kept after expiry) is rare; draw again.
                let code = LinkCode.generate()
                do {
                    try insert.execute([playerID, device.deviceID, code.hash, SQLitePlayerRepository.timestamp(now), SQLitePlayerRepository.timestamp(expiresAt)])
                    return IssuedLinkCode(code: code.displayText, expiresAt: expiresAt)
                } catch let error as DatabaseError where error.isUniqueViolation && attempt < 5 {
                    continue
                }
            }
        }
    }

    /// Seconds until the player may create another code (at least 1), or nil when they may now.
    public func retryAfter(playerID: Int64, now: Date) throws -> TimeInterval? {
        try database.transaction(.deferred) { db in try retryAfter(db, playerID: playerID, now: now) }
    }

    /// Joins a new device to the player who created `code`, and returns that device's token:
    /// the only time it exists outside the client.
    ///
    /// - Parameter code: as typed: case, dashes and spaces do not matter (see ``LinkCode``).
    /// - Throws: `StoreError(.invalid)` for a code of the wrong shape (`field: "code"`) or a bad
    ///   label (`field: "deviceLabel"`); `.notFound` for a code nobody created; `.expired` for a
    ///   code already used (codes work once), past its lifetime, or whose device was revoked.
    public func claim(code: String, deviceLabel: String, now: Date) throws -> (player: Player, token: String) {
        guard let code = LinkCode(parsing: code) else {
            throw LinkCodePolicy.malformedCode
        }
        let label = try Device.validatedLabel(deviceLabel)
        return try database.transaction(.immediate) { db in
            let found = try db.prepare("""
                SELECT link_codes.id, link_codes.player_id, link_codes.expires_at,
                       link_codes.claimed_at IS NOT NULL, devices.revoked_at IS NOT NULL
                FROM link_codes JOIN devices ON devices.id = link_codes.created_by_device_id
                WHERE link_codes.code_hash = ?
                """).query([code.hash]) { row in
                (id: row.int64(at: 0), playerID: row.int64(at: 1), expiresAt: row.string(at: 2),
                 isClaimed: row.bool(at: 3), creatorRevoked: row.bool(at: 4))
            }.first
            guard let found else {
                throw LinkCodePolicy.unknownCode
            }
            guard !found.isClaimed else {
                throw LinkCodePolicy.usedCode
            }
            // Fixed-width UTC text: string order is time order.
            guard SQLitePlayerRepository.timestamp(now) < found.expiresAt else {
                throw policy.expiredCode
            }
            guard !found.creatorRevoked else {
                throw LinkCodePolicy.revokedCreator
            }
            let token = try SQLitePlayerRepository.insertDevice(db, playerID: found.playerID, label: label, now: now)
            try db.prepare("UPDATE link_codes SET claimed_at = ?, claimed_by_device_id = ? WHERE id = ? AND claimed_at IS NULL")
                .execute([SQLitePlayerRepository.timestamp(now), db.lastInsertRowID, found.id])
            // The write lock taken at BEGIN IMMEDIATE makes this certain; checked anyway, so a
            // change to the locking can never hand out two tokens for one code.
            guard db.changes == 1 else {
                throw LinkCodePolicy.usedCode
            }
            return (try SQLitePlayerRepository.readPlayer(db, id: found.playerID), token.text)
        }
    }

    // MARK: - Rate limit

    /// Inside a transaction: nil when the player has created fewer than the maximum codes in
    /// the window ending at `now`, else the seconds until the oldest of them leaves it.
    private func retryAfter(_ db: Database, playerID: Int64, now: Date) throws -> TimeInterval? {
        let windowStart = SQLitePlayerRepository.timestamp(now.addingTimeInterval(-policy.window))
        let recent = try db.prepare("""
            SELECT created_at FROM link_codes WHERE player_id = ? AND created_at > ?
            ORDER BY created_at DESC LIMIT ?
            """).query([playerID, windowStart, policy.maximumPerWindow]) { try SQLitePlayerRepository.date($0.string(at: 0), column: "link_codes.created_at") }
        return policy.retryAfter(recent: recent, now: now)
    }
}
