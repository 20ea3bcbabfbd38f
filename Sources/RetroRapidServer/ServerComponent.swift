import RetroRapidSupport

/// What a part of the server gets to work with, shared by every part: the configuration, the
/// storage thread, the way back onto the service thread, the metrics, the player events, a
/// logger, the rule that says which address a client counts as (trusted proxies), the
/// limits on guessing that the HTTP API and the game side share, and the cluster relay.
struct ServerComponentContext: Sendable {
    let configuration: ServerConfiguration
    let worker: DatabaseWorker
    let mailbox: ServiceMailbox
    let metrics: Metrics
    let events: PlayerEvents
    let logger: Logger
    let clientAddresses: ClientAddressResolver
    let rateLimits: RateLimits
    /// The other nodes of a cluster: publish to them, subscribe to what they say (inert on a
    /// single node).
    let cluster: ClusterRelay
    /// What makes this server a node (its name, this process): set in cluster mode, nil on a
    /// single node.
    var membership: ClusterMembership? = nil
}

/// A part of the server that lives next to the HTTP API on the same service thread: the
/// WebSocket game side. `GameServer` creates it with a `ServerComponentContext`, adds its
/// protocols and routes to the one libwebsockets context, and ends it first when stopping.
///
/// Threading rule: libwebsockets calls the component's protocol callbacks on the service
/// thread; `addRoutes` runs once, before the server starts; `beginShutdown` runs on the
/// service thread.
protocol ServerComponent: AnyObject, Sendable {
    /// libwebsockets protocols after the HTTP one (`protocols[0]`, which drains the mailbox
    /// and counts connections; these callbacks leave those reasons alone).
    var protocols: [LWSProtocolDefinition] { get }

    /// HTTP routes this component answers, if any.
    func addRoutes(to router: inout HTTPRouter)

    /// The server is stopping and refuses new connections. End what is running (games end as
    /// "server shutdown", their scores handed to the `DatabaseWorker`), then call `done` from
    /// any thread. The worker finishes every job submitted before `done` before it closes.
    func beginShutdown(_ done: @escaping @Sendable () -> Void)

    /// What the operator's overview shows of this part now, by name (race rooms open,
    /// watchers). On the service thread; a count, not a hot path.
    func liveFigures() -> [String: Int]
}

extension ServerComponent {
    func addRoutes(to router: inout HTTPRouter) {}
    func liveFigures() -> [String: Int] { [:] }
}
