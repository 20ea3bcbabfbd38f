import Foundation
import RetroRapidDomain

/// Link codes on PostgreSQL: how a player's second device joins them (docs/API.md, "Players
/// and devices"). Codes are stored as SHA-256 of their normalised symbols, never as text.
///
/// How each rule stays exact with many nodes writing at once (READ COMMITTED): creating and
/// claiming a code both lock the player's row first (`SELECT … FOR UPDATE`), as revoking a
/// device does (``PostgresPlayerRepository``). So the per-player creation limit counts codes
/// no concurrent creation can add to, two devices claiming one code are serialised (the
/// second finds it claimed: one token per code), and a claim cannot slip past a revoke of the
/// device that showed the code. The claim's UPDATE keeps `claimed_at IS NULL` in its WHERE
/// and checks it changed one row, so a change to the locking could never hand out two tokens.
public struct PostgresLinkCodeRepository: LinkCodeRepository {
    public let connection: PostgresConnection
    public let policy: LinkCodePolicy

    public init(connection: PostgresConnection, policy: LinkCodePolicy = LinkCodePolicy()) {
        self.connection = connection
        self.policy = policy
    }

    public func createCode(for device: AuthenticatedDevice, now: Date) throws -> IssuedLinkCode {
        let playerID = device.player.id
        return try connection.transaction { db in
            try Self.lockPlayer(playerID, in: db)
            guard try !db.execute("SELECT 1 FROM devices WHERE id = $1 AND player_id = $2 AND revoked_at IS NULL",
                                  [device.deviceID, playerID]).isEmpty
            else { throw LinkCodePolicy.signedOutCreator }
            if let wait = try retryAfter(db, playerID: playerID, now: now) {
                throw policy.tooManyCodes(retryAfter: wait)
            }
            try db.execute("DELETE FROM link_codes WHERE player_id = $1 AND expires_at < $2",
                           [playerID, UTCCivilTime.text(now.addingTimeInterval(-LinkCodePolicy.retention))])
            let expiresAt = UTCCivilTime.date(seconds: UTCCivilTime.seconds(now.addingTimeInterval(policy.lifetime)))
            var attempt = 0
            while true {
                attempt += 1
                // A clash with another code (live, or kept after expiry) is rare; draw again.
                let code = LinkCode.generate()
                let onConflict = attempt < 5 ? "ON CONFLICT (code_hash) DO NOTHING" : ""
                let inserted = try db.execute("""
                    INSERT INTO link_codes (player_id, created_by_device_id, code_hash, created_at, expires_at)
                    VALUES ($1, $2, $3, $4, $5) \(onConflict)
                    """, [playerID, device.deviceID, code.hash, UTCCivilTime.text(now), UTCCivilTime.text(expiresAt)])
                if inserted.affectedRows == 1 {
                    return IssuedLinkCode(code: code.displayText, expiresAt: expiresAt)
                }
            }
        }
    }

    public func retryAfter(playerID: Int64, now: Date) throws -> TimeInterval? {
        try retryAfter(connection, playerID: playerID, now: now)
    }

    public func claim(code: String, deviceLabel: String, now: Date) throws -> (player: Player, token: String) {
        guard let code = LinkCode(parsing: code) else { throw LinkCodePolicy.malformedCode }
        let label = try Device.validatedLabel(deviceLabel)
        return try connection.transaction { db in
            guard let owner = try db.execute("SELECT player_id FROM link_codes WHERE code_hash = $1", [code.hash]).first
            else { throw LinkCodePolicy.unknownCode }
            let playerID = owner.int64(at: 0)
            try Self.lockPlayer(playerID, in: db)
            // Read again under the lock: what a claim or revoke that committed meanwhile left.
            guard let found = try db.execute("""
                SELECT link_codes.id, link_codes.expires_at, link_codes.claimed_at IS NOT NULL, devices.revoked_at IS NOT NULL
                FROM link_codes JOIN devices ON devices.id = link_codes.created_by_device_id
                WHERE link_codes.code_hash = $1
                """, [code.hash]).first
            else { throw LinkCodePolicy.unknownCode }
            guard !found.bool(at: 2) else { throw LinkCodePolicy.usedCode }
            // Fixed-width UTC text: string order is time order.
            guard UTCCivilTime.text(now) < found.string(at: 1) else { throw policy.expiredCode }
            guard !found.bool(at: 3) else { throw LinkCodePolicy.revokedCreator }
            let device = try PostgresPlayerRepository.insertDevice(db, playerID: playerID, label: label, now: now)
            let claimed = try db.execute("UPDATE link_codes SET claimed_at = $1, claimed_by_device_id = $2 WHERE id = $3 AND claimed_at IS NULL",
                                         [UTCCivilTime.text(now), device.id, found.int64(at: 0)])
            guard claimed.affectedRows == 1 else { throw LinkCodePolicy.usedCode }
            return (try PostgresPlayerRepository.readPlayer(db, id: playerID), device.token.text)
        }
    }

    // MARK: - Inside a transaction

    /// The player's creations within the window ending at `now` decide (``LinkCodePolicy``).
    private func retryAfter(_ db: PostgresConnection, playerID: Int64, now: Date) throws -> TimeInterval? {
        let recent = try db.execute("""
            SELECT created_at FROM link_codes WHERE player_id = $1 AND created_at > $2
            ORDER BY created_at DESC LIMIT $3
            """, [playerID, UTCCivilTime.text(now.addingTimeInterval(-policy.window)), policy.maximumPerWindow])
            .map { try UTCCivilTime.storedDate($0.string(at: 0), column: "link_codes.created_at") }
        return policy.retryAfter(recent: recent, now: now)
    }

    private static func lockPlayer(_ playerID: Int64, in db: PostgresConnection) throws {
        try db.execute("SELECT 1 FROM players WHERE id = $1 FOR UPDATE", [playerID])
    }
}
