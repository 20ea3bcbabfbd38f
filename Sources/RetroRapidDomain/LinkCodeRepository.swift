import Foundation

/// Link codes: how a player's second device joins them (docs/API.md, "Players and devices").
/// A signed-in device creates a code; another device enters it and gets a device token of its
/// own for the same player. A code works once, for ``LinkCodePolicy/lifetime``; two devices
/// claiming one code at the same moment get one token between them.
/// Refusals are ``StoreError`` and change nothing.
public protocol LinkCodeRepository {
    /// How long codes live and how many a player may create.
    var policy: LinkCodePolicy { get }

    /// Creates a code for `device`'s player, valid for ``LinkCodePolicy/lifetime`` from `now`.
    /// - Throws: `StoreError(.rateLimited)` past ``LinkCodePolicy/maximumPerWindow``.
    func createCode(for device: AuthenticatedDevice, now: Date) throws -> IssuedLinkCode

    /// How long until the player may create another code; nil when they may now.
    func retryAfter(playerID: Int64, now: Date) throws -> TimeInterval?

    /// Joins a new device to the code's player and returns its token.
    /// - Throws: `StoreError(.invalid)`, `.notFound`, `.expired` for a bad, unknown, used or
    ///   expired code; `.invalid` for a bad label.
    func claim(code: String, deviceLabel: String, now: Date) throws -> (player: Player, token: String)
}
