import RetroRapidDomain
import RetroRapidSupport
import Synchronization

/// Between this node and the other nodes of a cluster (docs/OPERATIONS.md, "Scale out"): it
/// tells the others what happened here that their connected players must see, and turns what
/// they tell us into the same local events a request here would have caused.
///
/// - A settings write or a device revocation made here (`PlayerEvents`, origin this node,
///   published by the routes once the storage job has committed) goes out on the bus.
/// - `settingsChanged` from another node: the settings are read from the database here (the
///   message only says that they changed) and published as a change from another node, so the
///   WebSocket side pushes them to the player's devices connected here, the writing device
///   excepted, exactly as after a write here.
/// - `deviceRevoked` from another node: published likewise, so the device's connections here
///   close as after a revocation here.
/// - Every message received also goes to the observers that `subscribe`d (the running games'
///   hand-over between nodes listens for its own kinds).
///
/// Without a bus (one node on SQLite) it does nothing and costs nothing.
///
/// Threading rule: the bus calls back on its own thread; the relay only counts the message
/// and posts it to the `ServiceMailbox`, so everything else here runs on the service thread,
/// which never waits: the settings read is a `DatabaseWorker` job whose completion comes back
/// there. `publish` from any thread (it only queues on the bus). `start`/`stop` from the main
/// thread (`GameServer`).
public final class ClusterRelay: Sendable {
    /// The bus, nil on a single node.
    public let bus: (any ClusterBus)?
    private let mailbox: ServiceMailbox
    private let worker: DatabaseWorker
    private let events: PlayerEvents
    private let logger: Logger
    private let sent: Counter?
    private let received: Counter?
    private let observers = Mutex<[@Sendable (ClusterEnvelope) -> Void]>([])

    init(bus: (any ClusterBus)?, mailbox: ServiceMailbox, worker: DatabaseWorker, events: PlayerEvents,
         metrics: Metrics, logger: Logger) {
        self.bus = bus
        self.mailbox = mailbox
        self.worker = worker
        self.events = events
        self.logger = logger
        guard let bus else {
            sent = nil
            received = nil
            return
        }
        // Only a node with a bus shows these: a lone node is not a disconnected one.
        let sent = metrics.counter("retrorapid_cluster_messages_sent_total",
                                   help: "Messages this node published on the cluster bus, by kind.", labelNames: ["kind"])
        let received = metrics.counter("retrorapid_cluster_messages_received_total",
                                       help: "Messages from other nodes received on the cluster bus, by kind.", labelNames: ["kind"])
        for kind in ClusterMessage.kinds {
            sent.increment(by: 0, kind)
            received.increment(by: 0, kind)
        }
        self.sent = sent
        self.received = received
        metrics.gauge("retrorapid_cluster_bus_connected",
                      help: "1 while the cluster bus is connected to the database and listening, else 0 (messages meanwhile are lost).") {
            bus.isConnected ? 1 : 0
        }
        metrics.counter("retrorapid_cluster_bus_reconnects_total",
                        help: "Times the cluster bus lost its database connection and made it again.") {
            Double(bus.reconnectCount)
        }
        // The bus counts its rejections on its own thread; each scrape hands on what it counted
        // since the last, so every reason shows from the start, at 0.
        let rejected = metrics.counter("retrorapid_cluster_bus_rejected_total",
                                       help: "Notifications on the cluster bus's channel dropped before any handler saw them, by "
                                           + "reason: unsigned, bad_signature, stale, replayed, malformed (a forgery, a replay, "
                                           + "a node with another secret or a wrong clock).",
                                       labelNames: ["reason"])
        for reason in ClusterBusRejection.allCases {
            rejected.increment(by: 0, reason.rawValue)
        }
        let handedOn = Mutex([Int](repeating: 0, count: ClusterBusRejection.allCases.count))
        metrics.beforeRender {
            handedOn.withLock { handed in
                for (index, reason) in ClusterBusRejection.allCases.enumerated() {
                    let total = bus.rejectedCount(reason)
                    guard total > handed[index] else { continue }
                    rejected.increment(by: Double(total - handed[index]), reason.rawValue)
                    handed[index] = total
                }
            }
        }
        metrics.counter("retrorapid_cluster_bus_previous_secret_total",
                        help: "Messages from other nodes taken because they were signed with --cluster-secret-previous: "
                            + "while it grows, some node still signs with that secret.") {
            Double(bus.previousSecretCount)
        }
        events.subscribeToSettingsChanges(madeHereOnly: true) { [unowned self] playerID, deviceID, settings in
            publish(.settingsChanged(playerID: playerID, deviceID: deviceID, version: settings.version))
        }
        events.subscribeToDeviceRevocations(madeHereOnly: true) { [unowned self] playerID, deviceID in
            publish(.deviceRevoked(playerID: playerID, deviceID: deviceID))
        }
    }

    /// Starts listening to the other nodes. Main thread, once the server serves.
    func start() throws {
        guard let bus else { return }
        try bus.start { [weak self] envelope in
            // The bus thread: count it and hand it on, nothing more.
            guard let self else { return }
            received?.increment(envelope.message.kind)
            mailbox.post { [weak self] in self?.handle(envelope) }
        }
        logger.info("cluster bus listening", metadata: ["cluster.node": bus.nodeID])
    }

    /// Sends what is still queued and stops listening. Main thread, after the games have ended
    /// (their last messages go out first).
    func stop() {
        bus?.stop()
    }

    /// Tells the other nodes. Any thread; never blocks. Nothing happens without a bus.
    public func publish(_ message: ClusterMessage) {
        guard let bus else { return }
        sent?.increment(message.kind)
        bus.publish(message)
    }

    /// `observer` gets every message from another node, on the service thread, after the
    /// relay's own handling. Subscribe at startup.
    public func subscribe(_ observer: @escaping @Sendable (ClusterEnvelope) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    // MARK: - Service thread

    private func handle(_ envelope: ClusterEnvelope) {
        switch envelope.message {
        case .settingsChanged(let playerID, let deviceID, let version):
            let events = self.events
            let logger = self.logger
            worker.perform({ storage in try storage.settings.settings(playerID: playerID) }, then: { result in
                switch result {
                case .success(let settings):
                    events.publishSettingsChanged(playerID: playerID, deviceID: deviceID, settings: settings, origin: .otherNode)
                case .failure(let error):
                    // Only a live update is lost: the devices read the settings when they next ask.
                    logger.warning("could not read settings changed on another node",
                                   metadata: ["cluster.sender": envelope.sender, "player.id": String(playerID),
                                              "settings.version": String(version), "error": String(describing: error)])
                }
            })
        case .deviceRevoked(let playerID, let deviceID):
            events.publishDeviceRevoked(playerID: playerID, deviceID: deviceID, origin: .otherNode)
        case .releaseGame, .gameReleased, .gameStays:
            break
        }
        for observer in observers.withLock({ $0 }) {
            observer(envelope)
        }
    }
}
