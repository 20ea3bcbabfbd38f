import RetroRapidStorage
import Synchronization

/// Things that happened to a player through one part of the server that another part must
/// pass on: a settings change made over HTTP reaches the player's other connected devices
/// through the WebSocket side (DESIGN §4, "A change on one device reaches the player's other
/// connected devices live").
///
/// Threading: `subscribe` from any thread (at startup); `publish…` on the service thread, and
/// subscribers are called there, synchronously, in the order they subscribed. They must not
/// block.
public final class PlayerEvents: Sendable {
    /// A player's settings were written from `deviceID`; `settings` is what is stored now.
    public typealias SettingsObserver = @Sendable (_ playerID: Int64, _ deviceID: Int64, _ settings: VersionedSettings) -> Void

    private let settingsObservers = Mutex<[SettingsObserver]>([])

    public init() {}

    public func subscribeToSettingsChanges(_ observer: @escaping SettingsObserver) {
        settingsObservers.withLock { $0.append(observer) }
    }

    func publishSettingsChanged(playerID: Int64, deviceID: Int64, settings: VersionedSettings) {
        for observer in settingsObservers.withLock({ $0 }) {
            observer(playerID, deviceID, settings)
        }
    }
}
