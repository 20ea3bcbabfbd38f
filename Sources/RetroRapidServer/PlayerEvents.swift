import RetroRapidDomain
import Synchronization

/// Things that happened to a player through one part of the server that another part must
/// pass on: a settings change made over HTTP reaches the player's other connected devices
/// through the WebSocket side (docs/API.md, "Settings"), and a device signed out over HTTP
/// loses its open game connections (docs/SECURITY.md, "A leaked token").
///
/// Threading: `subscribe` from any thread (at startup); `publish…` on the service thread, and
/// subscribers are called there, synchronously, in the order they subscribed. They must not
/// block.
public final class PlayerEvents: Sendable {
    /// A player's settings were written from `deviceID`; `settings` is what is stored now.
    public typealias SettingsObserver = @Sendable (_ playerID: Int64, _ deviceID: Int64, _ settings: VersionedSettings) -> Void

    /// `deviceID` of `playerID` was signed out (revoked).
    public typealias RevocationObserver = @Sendable (_ playerID: Int64, _ deviceID: Int64) -> Void

    private let settingsObservers = Mutex<[SettingsObserver]>([])
    private let revocationObservers = Mutex<[RevocationObserver]>([])

    public init() {}

    public func subscribeToSettingsChanges(_ observer: @escaping SettingsObserver) {
        settingsObservers.withLock { $0.append(observer) }
    }

    func publishSettingsChanged(playerID: Int64, deviceID: Int64, settings: VersionedSettings) {
        for observer in settingsObservers.withLock({ $0 }) {
            observer(playerID, deviceID, settings)
        }
    }

    public func subscribeToDeviceRevocations(_ observer: @escaping RevocationObserver) {
        revocationObservers.withLock { $0.append(observer) }
    }

    func publishDeviceRevoked(playerID: Int64, deviceID: Int64) {
        for observer in revocationObservers.withLock({ $0 }) {
            observer(playerID, deviceID)
        }
    }
}
