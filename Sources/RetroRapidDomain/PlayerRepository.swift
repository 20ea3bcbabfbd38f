import Foundation

/// Players and their devices: creating a player with its first device token, signing devices
/// in, display names, listing and revoking devices. (Joining a second device goes through
/// ``LinkCodeRepository``.)
///
/// The contract every backend keeps (Tests/RetroRapidStorageTests run it against each): a
/// refusal throws ``StoreError`` and changes nothing; anything else thrown is a failure of the
/// store itself. Times come in as `now` and are kept to the second, the fraction dropped.
/// A repository is used from one thread at a time (the storage thread).
public protocol PlayerRepository {
    /// Creates a player and their first device, and returns the device token: the only time it
    /// exists outside the client, since only its SHA-256 is stored.
    ///
    /// - Parameters:
    ///   - displayName: validated by ``DisplayName``; nil picks one like "Racer 4821".
    ///   - deviceLabel: what the device calls itself; see ``Device/maximumLabelLength``.
    /// - Throws: `StoreError(.invalid)` for a bad name (`field: "displayName"`) or label
    ///   (`field: "deviceLabel"`).
    func createPlayer(displayName: String?, deviceLabel: String, now: Date) throws -> (player: Player, token: String)

    /// Signs a device in with the token it presents, and records that it was seen (at most
    /// once per ``Device/lastSeenResolution``, so most sign-ins are a read only).
    /// - Throws: `StoreError(.unauthorized)` for a malformed, unknown or revoked token.
    func authenticate(token: String, now: Date) throws -> AuthenticatedDevice

    /// The player with this public id (case-insensitive, as the alphabet is).
    /// - Throws: `StoreError(.notFound)`.
    func player(publicID: String) throws -> Player

    /// The player with this row id.
    /// - Throws: `StoreError(.notFound)`.
    func player(id: Int64) throws -> Player

    /// The players an operator's search finds, at most `limit` (1 to 100), oldest first: the one
    /// with this public id, those with this display name (any case), and the owner of the
    /// device with this number.
    /// - Throws: `StoreError(.invalid)` for a limit out of range.
    func search(_ text: String, limit: Int) throws -> [Player]

    /// Changes a player's display name and returns the player as now stored.
    /// - Throws: `StoreError(.invalid, field: "displayName")`, `StoreError(.notFound)`.
    @discardableResult
    func setDisplayName(playerID: Int64, name: String) throws -> Player

    /// A player's devices, oldest first, revoked ones included (marked).
    /// - Parameter currentDeviceID: the device asking, marked ``Device/isCurrent``; nil when
    ///   no device asks (the operator's CLI).
    /// - Throws: `StoreError(.notFound)` for an unknown player.
    func devices(playerID: Int64, currentDeviceID: Int64?) throws -> [Device]

    /// Signs one of a player's devices out for good, and the link codes it created and nobody
    /// claimed yet. Revoking a revoked device changes nothing and succeeds.
    ///
    /// The last active device is refused (`StoreError(.conflict)`) unless `allowingLastDevice`
    /// (the operator's CLI, for a stolen only device): with no device left nobody could sign in
    /// as the player again.
    /// - Throws: `StoreError(.notFound)` when the player has no device with this id, including
    ///   one that belongs to someone else; `StoreError(.conflict)` for the last active device.
    func revokeDevice(playerID: Int64, deviceID: Int64, now: Date, allowingLastDevice: Bool) throws
}

extension PlayerRepository {
    public func devices(playerID: Int64) throws -> [Device] {
        try devices(playerID: playerID, currentDeviceID: nil)
    }

    public func revokeDevice(playerID: Int64, deviceID: Int64, now: Date) throws {
        try revokeDevice(playerID: playerID, deviceID: deviceID, now: now, allowingLastDevice: false)
    }
}
