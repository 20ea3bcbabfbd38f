import Foundation

/// The unlimited-play entitlement: the first grant per player. Granting again changes nothing
/// and returns that first grant, so a replayed payment or a repeated code is harmless.
public protocol EntitlementRepository {
    /// - Throws: `StoreError(.notFound)` for an unknown player, `.invalid` for a bad reference.
    @discardableResult
    func grantUnlimited(playerID: Int64, source: UnlimitedEntitlement.Source, reference: String, now: Date) throws -> UnlimitedEntitlement

    func hasUnlimited(playerID: Int64) throws -> Bool

    func unlimited(playerID: Int64) throws -> UnlimitedEntitlement?
}
