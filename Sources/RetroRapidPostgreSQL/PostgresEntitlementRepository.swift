import Foundation
import RetroRapidDomain

/// Grants and reads the unlimited-play entitlement: one row per player in
/// `unlimited_entitlements`, the first grant. Granting again changes nothing and returns that
/// first grant (`ON CONFLICT DO NOTHING` on the primary key, atomic however many nodes grant
/// at once), so a replayed payment or a repeated code is harmless.
///
/// Codes and orders grant it inside their own transactions through `grant(…in:)`, so a
/// redemption or a payment and its entitlement commit together.
public struct PostgresEntitlementRepository: EntitlementRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    @discardableResult
    public func grantUnlimited(playerID: Int64, source: UnlimitedEntitlement.Source, reference: String,
                               now: Date) throws -> UnlimitedEntitlement {
        let reference = try UnlimitedEntitlement.validatedReference(reference)
        return try connection.transaction { db in
            try PostgresPlayerLookup.requirePlayer(playerID, in: db)
            return try Self.grant(playerID: playerID, source: source, reference: reference, now: now, in: db)
        }
    }

    public func hasUnlimited(playerID: Int64) throws -> Bool {
        try unlimited(playerID: playerID) != nil
    }

    public func unlimited(playerID: Int64) throws -> UnlimitedEntitlement? {
        try Self.unlimited(playerID: playerID, in: connection)
    }

    // MARK: - Inside another repository's transaction

    /// Inserts the grant unless the player has one; returns the one they hold.
    static func grant(playerID: Int64, source: UnlimitedEntitlement.Source, reference: String, now: Date,
                      in db: PostgresConnection) throws -> UnlimitedEntitlement {
        try db.execute("""
            INSERT INTO unlimited_entitlements (player_id, source, reference, granted_at)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT (player_id) DO NOTHING
            """, [playerID, source.rawValue, reference, UTCCivilTime.text(now)])
        guard let entitlement = try unlimited(playerID: playerID, in: db) else {
            throw StoreError.unreadable("unlimited_entitlements has no row for player \(playerID) right after granting it")
        }
        return entitlement
    }

    static func unlimited(playerID: Int64, in db: PostgresConnection) throws -> UnlimitedEntitlement? {
        guard let row = try db.execute("SELECT source, reference, granted_at FROM unlimited_entitlements WHERE player_id = $1",
                                       [playerID]).first else { return nil }
        guard let source = UnlimitedEntitlement.Source(rawValue: row.string(at: 0)) else {
            throw StoreError.unreadable("unlimited_entitlements.source holds unknown '\(row.string(at: 0))'")
        }
        return UnlimitedEntitlement(playerID: playerID, source: source, reference: row.string(at: 1),
                                    grantedAt: try UTCCivilTime.storedDate(row.string(at: 2), column: "unlimited_entitlements.granted_at"))
    }
}
