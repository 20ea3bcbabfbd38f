import RetroRapidDomain
import Synchronization

/// Things that happened to a player through one part of the server that another part must
/// pass on: a settings change made over HTTP reaches the player's other connected devices
/// through the WebSocket side (docs/API.md, "Settings"), and a device signed out over HTTP
/// loses its open game connections (docs/SECURITY.md, "A leaked token").
///
/// In a cluster the same events also come from the other nodes (`ClusterRelay`, on the bus):
/// each is published with its ``Origin``, and the relay, which tells the other nodes, hears
/// only the ones made here, so nothing echoes between nodes.
///
/// Threading: `subscribe` from any thread (at startup); `publish…` on the service thread, and
/// subscribers are called there, synchronously, in the order they subscribed. They must not
/// block.
public final class PlayerEvents: Sendable {
    /// A player's settings were written from `deviceID`; `settings` is what is stored now.
    public typealias SettingsObserver = @Sendable (_ playerID: Int64, _ deviceID: Int64, _ settings: VersionedSettings) -> Void

    /// `deviceID` of `playerID` was signed out (revoked).
    public typealias RevocationObserver = @Sendable (_ playerID: Int64, _ deviceID: Int64) -> Void

    /// Where a change was made.
    public enum Origin: Sendable, Equatable {
        /// A request to this node.
        case thisNode
        /// A request to another node of the cluster, heard on the bus.
        case otherNode
    }

    private struct Subscription<Observer: Sendable>: Sendable {
        let madeHereOnly: Bool
        let observer: Observer
    }

    private let settingsObservers = Mutex<[Subscription<SettingsObserver>]>([])
    private let revocationObservers = Mutex<[Subscription<RevocationObserver>]>([])

    public init() {}

    /// `observer` hears every settings change, or with `madeHereOnly` only those made on this
    /// node (what the cluster relay passes on to the others).
    public func subscribeToSettingsChanges(madeHereOnly: Bool = false, _ observer: @escaping SettingsObserver) {
        settingsObservers.withLock { $0.append(Subscription(madeHereOnly: madeHereOnly, observer: observer)) }
    }

    func publishSettingsChanged(playerID: Int64, deviceID: Int64, settings: VersionedSettings, origin: Origin = .thisNode) {
        for subscription in settingsObservers.withLock({ $0 }) where origin == .thisNode || !subscription.madeHereOnly {
            subscription.observer(playerID, deviceID, settings)
        }
    }

    /// `observer` hears every revocation, or with `madeHereOnly` only those made on this node.
    public func subscribeToDeviceRevocations(madeHereOnly: Bool = false, _ observer: @escaping RevocationObserver) {
        revocationObservers.withLock { $0.append(Subscription(madeHereOnly: madeHereOnly, observer: observer)) }
    }

    func publishDeviceRevoked(playerID: Int64, deviceID: Int64, origin: Origin = .thisNode) {
        for subscription in revocationObservers.withLock({ $0 }) where origin == .thisNode || !subscription.madeHereOnly {
            subscription.observer(playerID, deviceID)
        }
    }
}
