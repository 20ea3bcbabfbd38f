import Foundation
import RetroRapidDomain

/// Link codes, on either backend: how a player's second device joins them (docs/API.md,
/// "Players and devices").
///
/// A signed-in device creates a code; another device enters it and gets a device token of its
/// own for the same player. A code works once and only for ``LinkCodePolicy/lifetime``; a
/// player may create at most ``LinkCodePolicy/maximumPerWindow`` codes per
/// ``LinkCodePolicy/window``, which bounds how many live codes a stolen device could spray
/// around.
///
/// Codes are stored as SHA-256 of their normalised symbols, not as text: the code is a bearer
/// credential while it lives, and a hash keeps it out of backups, CLI dumps and anyone's view
/// of the table. It would not stop an offline search of 40 bits; the few minutes a code lives
/// and its single use are what bound that risk. Guessing codes online (2⁴⁰ of them) is for the
/// server's rate limits to stop.
///
/// How each rule stays exact with many writers at once: creating and claiming a code both
/// lock the player's row first (PostgreSQL: `SELECT … FOR UPDATE`; SQLite: the one write
/// lock), as revoking a device does (``SQLPlayerRepository``). So the per-player creation
/// limit counts codes no concurrent creation can add to, two devices claiming one code are
/// serialised (the second finds it claimed: one token per code), and a claim cannot slip past
/// a revoke of the device that showed the code. The claim's UPDATE keeps `claimed_at IS NULL`
/// in its WHERE and checks it changed one row, so a change to the locking could never hand
/// out two tokens.
public struct SQLLinkCodeRepository: LinkCodeRepository {
    public let executor: any SQLExecutor
    public let policy: LinkCodePolicy

    public init(executor: any SQLExecutor, policy: LinkCodePolicy = LinkCodePolicy()) {
        self.executor = executor
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
        return try executor.writeTransaction {
            try SQLPlayerLookup.lockPlayer(playerID, in: executor)
            guard try !executor.query("SELECT 1 AS found FROM devices WHERE id = $1 AND player_id = $2 AND revoked_at IS NULL",
                                      [device.deviceID, playerID]).isEmpty
            else { throw LinkCodePolicy.signedOutCreator }
            if let wait = try retryAfter(playerID: playerID, now: now) {
                throw policy.tooManyCodes(retryAfter: wait)
            }
            try executor.query("DELETE FROM link_codes WHERE player_id = $1 AND expires_at < $2",
                               [playerID, UTCCivilTime.text(now.addingTimeInterval(-LinkCodePolicy.retention))])
            let expiresAt = UTCCivilTime.date(seconds: UTCCivilTime.seconds(now.addingTimeInterval(policy.lifetime)))
            var attempt = 0
            while true {
                attempt += 1
                // A clash with another code (live, or kept after expiry) is rare; draw again.
                let code = LinkCode.generate()
                let onConflict = attempt < 5 ? "ON CONFLICT (code_hash) DO NOTHING" : ""
                let inserted = try executor.query("""
                    INSERT INTO link_codes (player_id, created_by_device_id, code_hash, created_at, expires_at)
                    VALUES ($1, $2, $3, $4, $5) \(onConflict)
                    """, [playerID, device.deviceID, code.hash, UTCCivilTime.text(now), UTCCivilTime.text(expiresAt)])
                if inserted.affectedRows == 1 {
                    return IssuedLinkCode(code: code.displayText, expiresAt: expiresAt)
                }
            }
        }
    }

    /// Joins a new device to the player who created `code`, and returns that device's token:
    /// the only time it exists outside the client.
    ///
    /// - Parameter code: as typed: case, dashes and spaces do not matter (see ``LinkCode``).
    /// - Throws: `StoreError(.invalid)` for a code of the wrong shape (`field: "code"`) or a bad
    ///   label (`field: "deviceLabel"`); `.notFound` for a code nobody created; `.expired` for a
    ///   code already used (codes work once), past its lifetime, or whose device was revoked.
    public func claim(code: String, deviceLabel: String, now: Date) throws -> (player: Player, token: String) {
        guard let code = LinkCode(parsing: code) else { throw LinkCodePolicy.malformedCode }
        let label = try Device.validatedLabel(deviceLabel)
        return try executor.writeTransaction {
            guard let owner = try executor.query("SELECT player_id FROM link_codes WHERE code_hash = $1", [code.hash]).first
            else { throw LinkCodePolicy.unknownCode }
            let playerID = try owner.int64("player_id")
            try SQLPlayerLookup.lockPlayer(playerID, in: executor)
            // Read again under the lock: what a claim or revoke that committed meanwhile left.
            guard let found = try executor.query("""
                SELECT link_codes.id AS id, link_codes.expires_at AS expires_at, link_codes.claimed_at IS NOT NULL AS claimed,
                       devices.revoked_at IS NOT NULL AS creator_revoked
                FROM link_codes JOIN devices ON devices.id = link_codes.created_by_device_id
                WHERE link_codes.code_hash = $1
                """, [code.hash]).first
            else { throw LinkCodePolicy.unknownCode }
            guard try !found.bool("claimed") else { throw LinkCodePolicy.usedCode }
            // Fixed-width UTC text: string order is time order.
            guard UTCCivilTime.text(now) < (try found.string("expires_at")) else { throw policy.expiredCode }
            guard try !found.bool("creator_revoked") else { throw LinkCodePolicy.revokedCreator }
            let device = try SQLPlayerRepository.insertDevice(executor, playerID: playerID, label: label, now: now)
            let claimed = try executor.query(
                "UPDATE link_codes SET claimed_at = $1, claimed_by_device_id = $2 WHERE id = $3 AND claimed_at IS NULL",
                [UTCCivilTime.text(now), device.id, try found.int64("id")])
            guard claimed.affectedRows == 1 else { throw LinkCodePolicy.usedCode }
            return (try SQLPlayerRepository.readPlayer(executor, id: playerID), device.token.text)
        }
    }

    // MARK: - The creation limit

    /// Seconds until the player may create another code (at least 1), or nil when they may now:
    /// the player's creations within the window ending at `now` decide (``LinkCodePolicy``).
    public func retryAfter(playerID: Int64, now: Date) throws -> TimeInterval? {
        let recent = try executor.query("""
            SELECT created_at FROM link_codes WHERE player_id = $1 AND created_at > $2
            ORDER BY created_at DESC LIMIT $3
            """, [playerID, UTCCivilTime.text(now.addingTimeInterval(-policy.window)), policy.maximumPerWindow])
            .rows.map { try UTCCivilTime.storedDate($0.string("created_at"), column: "link_codes.created_at") }
        return policy.retryAfter(recent: recent, now: now)
    }
}
