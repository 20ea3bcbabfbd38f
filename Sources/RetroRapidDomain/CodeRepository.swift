import Foundation

/// Promo codes: the operator creates, lists and disables them; players redeem them (an unlock
/// grants unlimited play in the same write, a discount lowers the price of the next order).
/// Refusals are ``StoreError`` and change nothing.
public protocol CodeRepository {
    /// - Throws: `StoreError(.invalid)` for a bad code or window, `.conflict` when it exists.
    @discardableResult
    func create(code: String, kind: PromoCode.Kind, startsAt: Date?, expiresAt: Date?, maxRedemptions: Int?, now: Date) throws -> PromoCode

    /// Every code, newest first.
    func list() throws -> [PromoCode]

    /// - Throws: `StoreError(.notFound)`.
    func code(_ code: String) throws -> PromoCode

    /// Disables a code for good; disabling it again changes nothing.
    /// - Throws: `StoreError(.notFound)`.
    @discardableResult
    func disable(code: String, now: Date) throws -> PromoCode

    /// - Throws: `StoreError` `.notFound`, `.expired`, `.conflict`, `.forbidden` as the code
    ///   and the player's state say.
    @discardableResult
    func redeem(code: String, playerID: Int64, now: Date) throws -> Redemption

    /// The player's redemptions, oldest first.
    func redemptions(playerID: Int64) throws -> [Redemption]
}

extension CodeRepository {
    @discardableResult
    public func create(code: String, kind: PromoCode.Kind, startsAt: Date? = nil, expiresAt: Date? = nil,
                       maxRedemptions: Int? = nil, now: Date) throws -> PromoCode {
        try create(code: code, kind: kind, startsAt: startsAt, expiresAt: expiresAt, maxRedemptions: maxRedemptions, now: now)
    }
}
