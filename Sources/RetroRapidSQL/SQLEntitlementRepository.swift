import Foundation
import RetroRapidDomain

/// Grants and reads the unlimited-play entitlement: one row per player in
/// `unlimited_entitlements`, the first grant. Granting again changes nothing and returns that
/// first grant (`ON CONFLICT DO NOTHING` on the primary key, atomic however many nodes grant
/// at once), so a replayed payment or a repeated code is harmless.
///
/// Codes and orders grant it inside their own transactions through `grant(…in:)`, so a
/// redemption or a payment and its entitlement commit together.
public struct SQLEntitlementRepository: EntitlementRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// Grants unlimited play (idempotent): returns the entitlement the player now holds, which is
    /// the earlier one if they already had it. `.notFound` for an unknown player, `.invalid` for
    /// an empty or over-long reference.
    @discardableResult
    public func grantUnlimited(playerID: Int64, source: UnlimitedEntitlement.Source, reference: String,
                               now: Date) throws -> UnlimitedEntitlement {
        let reference = try UnlimitedEntitlement.validatedReference(reference)
        return try executor.writeTransaction {
            try SQLPlayerLookup.requirePlayer(playerID, in: executor)
            return try Self.grant(playerID: playerID, source: source, reference: reference, now: now, in: executor)
        }
    }

    /// Whether the player has unlimited play. False for an unknown player.
    public func hasUnlimited(playerID: Int64) throws -> Bool {
        try unlimited(playerID: playerID) != nil
    }

    /// The player's entitlement, or nil.
    public func unlimited(playerID: Int64) throws -> UnlimitedEntitlement? {
        try Self.unlimited(playerID: playerID, in: executor)
    }

    // MARK: - Inside another repository's transaction

    /// Inserts the grant unless the player has one; returns the one they hold.
    public static func grant(playerID: Int64, source: UnlimitedEntitlement.Source, reference: String, now: Date,
                             in db: any SQLExecutor) throws -> UnlimitedEntitlement {
        try db.query("""
            INSERT INTO unlimited_entitlements (player_id, source, reference, granted_at)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT (player_id) DO NOTHING
            """, [playerID, source.rawValue, reference, UTCCivilTime.text(now)])
        guard let entitlement = try unlimited(playerID: playerID, in: db) else {
            throw StoreError.unreadable("unlimited_entitlements has no row for player \(playerID) right after granting it")
        }
        return entitlement
    }

    public static func unlimited(playerID: Int64, in db: any SQLExecutor) throws -> UnlimitedEntitlement? {
        guard let row = try db.query("SELECT source, reference, granted_at FROM unlimited_entitlements WHERE player_id = $1",
                                     [playerID]).first else { return nil }
        let source = try row.string("source")
        guard let parsedSource = UnlimitedEntitlement.Source(rawValue: source) else {
            throw StoreError.unreadable("unlimited_entitlements.source holds unknown '\(source)'")
        }
        return UnlimitedEntitlement(playerID: playerID, source: parsedSource, reference: try row.string("reference"),
                                    grantedAt: try UTCCivilTime.storedDate(row.string("granted_at"), column: "unlimited_entitlements.granted_at"))
    }
}
