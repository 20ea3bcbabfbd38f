import Foundation
import RetroRapidDomain

/// Grants and reads the unlimited-play entitlement: one row per player in
/// `unlimited_entitlements`, the first grant. Granting again changes nothing and returns that
/// first grant, so a replayed payment or a repeated code is harmless.
///
/// Codes and orders grant it inside their own transactions through the internal
/// `grant(…in:)`, so a redemption or a payment and its entitlement commit together.
public struct SQLiteEntitlementRepository: EntitlementRepository {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Grants unlimited play (idempotent): returns the entitlement the player now holds, which is
    /// the earlier one if they already had it. `.notFound` for an unknown player, `.invalid` for
    /// an empty or over-long reference.
    @discardableResult
    public func grantUnlimited(
        playerID: Int64,
        source: UnlimitedEntitlement.Source,
        reference: String,
        now: Date
    ) throws -> UnlimitedEntitlement {
        let reference = try UnlimitedEntitlement.validatedReference(reference)
        return try database.transaction(.immediate) { db in
            try SQLitePlayerRepository.requirePlayer(playerID, in: db)
            return try Self.grant(playerID: playerID, source: source, reference: reference, now: now, in: db)
        }
    }

    /// Whether the player has unlimited play. False for an unknown player.
    public func hasUnlimited(playerID: Int64) throws -> Bool {
        try unlimited(playerID: playerID) != nil
    }

    /// The player's entitlement, or nil.
    public func unlimited(playerID: Int64) throws -> UnlimitedEntitlement? {
        try Self.unlimited(playerID: playerID, in: database)
    }

    // MARK: - Inside another repository's transaction

    /// Inserts the grant unless the player has one; returns the one they hold.
    static func grant(
        playerID: Int64,
        source: UnlimitedEntitlement.Source,
        reference: String,
        now: Date,
        in db: Database
    ) throws -> UnlimitedEntitlement {
        try db.prepare("""
            INSERT INTO unlimited_entitlements (player_id, source, reference, granted_at)
            VALUES (?, ?, ?, ?)
            ON CONFLICT (player_id) DO NOTHING
            """).execute([playerID, source.rawValue, reference, UTCCivilTime.text(now)])
        guard let entitlement = try unlimited(playerID: playerID, in: db) else {
            throw StoreError.unreadable("unlimited_entitlements has no row for player \(playerID) right after granting it")
        }
        return entitlement
    }

    static func unlimited(playerID: Int64, in db: Database) throws -> UnlimitedEntitlement? {
        let rows = try db.prepare("SELECT source, reference, granted_at FROM unlimited_entitlements WHERE player_id = ?")
            .query([playerID]) { row in (row.string(at: 0), row.string(at: 1), row.string(at: 2)) }
        guard let (source, reference, grantedAt) = rows.first else { return nil }
        guard let parsedSource = UnlimitedEntitlement.Source(rawValue: source) else {
            throw StoreError.unreadable("unlimited_entitlements.source holds unknown '\(source)'")
        }
        return UnlimitedEntitlement(
            playerID: playerID,
            source: parsedSource,
            reference: reference,
            grantedAt: try UTCCivilTime.storedDate(grantedAt, column: "unlimited_entitlements.granted_at")
        )
    }
}
