/// The bus between the nodes of a cluster: PostgreSQL's LISTEN/NOTIFY on the shared database
/// (RetroRapidPostgreSQL's `PostgresClusterBus`), opened by `StorageFactory`. A single node on
/// SQLite has none.
///
/// Delivery is at most once and only to nodes listening at the time: a receiver treats a
/// message as a hint to read the database, never as the data itself.
public protocol ClusterBus: AnyObject, Sendable {
    /// This node's name (`--node-id`); messages carry it as their sender.
    var nodeID: String { get }

    /// True while the bus can send and receive (for PostgreSQL: its connection is up and
    /// listening). Any thread; for the `retrorapid_cluster_bus_connected` gauge.
    var isConnected: Bool { get }

    /// How many times the bus lost its connection and made it again since `start`. Any thread.
    var reconnectCount: Int { get }

    /// How many notifications the bus dropped for `reason` since `start` (unsigned, badly
    /// signed, stale, replayed: `ClusterSigner`) before any handler saw them. Any thread.
    func rejectedCount(_ reason: ClusterBusRejection) -> Int

    /// How many messages it took that were signed with the previous cluster secret, not the
    /// current one: while this grows, some node still signs with the old secret. Any thread.
    var previousSecretCount: Int { get }

    /// Starts delivering the other nodes' messages (never this node's own, never one whose
    /// signature or time is wrong, never a copy of one delivered) to `receive`, on
    /// the bus's own thread: `receive` must hand them on (to the service thread's mailbox)
    /// and return at once.
    func start(_ receive: @escaping @Sendable (ClusterEnvelope) -> Void) throws

    /// Sends to every other node. Any thread; never blocks (queued, sent on the bus thread).
    func publish(_ message: ClusterMessage)

    /// Stops delivering and closes the bus's connection; waits for its thread to end.
    func stop()
}

extension ClusterBus {
    /// A bus that cannot lose its connection nor be forged (one inside a test process).
    public var isConnected: Bool { true }
    public var reconnectCount: Int { 0 }
    public func rejectedCount(_ reason: ClusterBusRejection) -> Int { 0 }
    public var previousSecretCount: Int { 0 }
}
