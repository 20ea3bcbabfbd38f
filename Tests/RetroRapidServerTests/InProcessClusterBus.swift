import Dispatch
import RetroRapidDomain
import Synchronization

/// The nodes of a cluster inside one test process: what PostgreSQL's LISTEN/NOTIFY is between
/// `retrorapid serve` processes (`PostgresClusterBus`), without a server. Each node's
/// `InProcessClusterBus` joins one network; a message one publishes reaches every other bus
/// that has started, never the sender, in the order it was published.
///
/// What it keeps of the real bus: payloads travel as text (`ClusterEnvelope.encoded`) and are
/// parsed on arrival, a receiver is called on a thread of the bus (a serial queue per bus), not
/// the publisher's, and a bus that is cut off (`isConnected = false`) loses what is sent to
/// it or by it meanwhile, as a node that lost its connection does.
final class InProcessClusterNetwork: Sendable {
    private let members = Mutex<[InProcessClusterBus]>([])

    init() {}

    /// A bus for node `nodeID` on this network (it joins at `start`).
    func bus(nodeID: String) -> InProcessClusterBus {
        InProcessClusterBus(nodeID: nodeID, network: self)
    }

    /// Cuts off every started bus of node `nodeID` (`isConnected = false`), as the bus of a
    /// node that died is: nothing it publishes leaves it, nothing reaches it.
    func cut(nodeID: String) {
        for member in members.withLock({ $0 }) where member.nodeID == nodeID {
            member.isConnected = false
        }
    }

    fileprivate func join(_ bus: InProcessClusterBus) {
        members.withLock { $0.append(bus) }
    }

    fileprivate func leave(_ bus: InProcessClusterBus) {
        members.withLock { $0.removeAll { $0 === bus } }
    }

    fileprivate func send(_ payload: String, from sender: InProcessClusterBus) {
        for member in members.withLock({ $0 }) where member !== sender {
            member.deliver(payload)
        }
    }
}

/// One node's end of an `InProcessClusterNetwork`.
///
/// Threading rule: `publish`, `stop` and the properties from any thread; `receive` runs on
/// this bus's own serial queue, one message at a time, as the PostgreSQL bus calls it on its
/// thread.
final class InProcessClusterBus: ClusterBus {
    let nodeID: String
    private let network: InProcessClusterNetwork
    private let queue: DispatchQueue
    private let state = Mutex(State())

    private struct State {
        var receive: (@Sendable (ClusterEnvelope) -> Void)?
        var connected = true
        var reconnects = 0
        /// Every message this bus published, in order (what a test checks was sent).
        var published: [ClusterMessage] = []
        /// Payloads that arrived and did not parse.
        var ignored = 0
    }

    fileprivate init(nodeID: String, network: InProcessClusterNetwork) {
        self.nodeID = nodeID
        self.network = network
        queue = DispatchQueue(label: "rr-test-bus-\(nodeID)")
    }

    /// Cut off (false) or back (true, counted as a reconnect). While cut off, nothing this
    /// node publishes leaves it and nothing sent to it arrives.
    var isConnected: Bool {
        get { state.withLock { $0.connected } }
        set {
            state.withLock { state in
                if newValue && !state.connected { state.reconnects += 1 }
                state.connected = newValue
            }
        }
    }

    var reconnectCount: Int { state.withLock { $0.reconnects } }

    /// What this node published so far, oldest first.
    var published: [ClusterMessage] { state.withLock { $0.published } }

    /// Payloads that reached this bus and were not a message it knows.
    var ignoredCount: Int { state.withLock { $0.ignored } }

    func start(_ receive: @escaping @Sendable (ClusterEnvelope) -> Void) throws {
        state.withLock { $0.receive = receive }
        network.join(self)
    }

    func publish(_ message: ClusterMessage) {
        let connected = state.withLock { state in
            state.published.append(message)
            return state.connected
        }
        guard connected else { return }
        network.send(ClusterEnvelope(sender: nodeID, message: message).encoded, from: self)
    }

    /// Sends `payload` as it stands to every other node, as a stranger on the channel could.
    func publishRaw(_ payload: String) {
        network.send(payload, from: self)
    }

    func stop() {
        network.leave(self)
        // Whatever is being delivered finishes first; nothing arrives after stop returns.
        queue.sync {}
        state.withLock { $0.receive = nil }
    }

    /// Waits until everything already sent to this bus has been handed to its receiver.
    func drain() {
        queue.sync {}
    }

    fileprivate func deliver(_ payload: String) {
        guard state.withLock({ $0.connected && $0.receive != nil }) else { return }
        queue.async { [self] in
            guard let envelope = ClusterEnvelope(encoded: payload) else {
                state.withLock { $0.ignored += 1 }
                return
            }
            // A node never hears itself, whatever the network does.
            guard envelope.sender != nodeID, let receive = state.withLock({ $0.receive }) else { return }
            receive(envelope)
        }
    }
}
