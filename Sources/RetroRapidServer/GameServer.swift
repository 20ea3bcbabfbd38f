import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSupport
import Synchronization

/// The whole server as `retrorapid serve` runs it: the database worker (SQLite on its own
/// thread), the HTTP server (files, the JSON API, /healthz, /metrics) and the parts that share
/// its service thread (the WebSocket game side), wired together; in a cluster, also the relay
/// to the other nodes over the bus (`ClusterRelay`).
///
/// Threads (docs/ARCHITECTURE.md): the libwebsockets service thread owns every socket, HTTP exchange and
/// running game; the storage thread owns the SQLite connection; they meet only through the
/// worker's queue (service → storage) and the `ServiceMailbox` + `lws_cancel_service`
/// (storage → service); the cluster bus's thread only posts to that mailbox. `start`/`stop`
/// are called from the main thread.
public final class GameServer: Sendable {
    public struct Options: Sendable {
        public var configuration: ServerConfiguration
        /// The OpenAPI document served at /api/v1/openapi.json: the configuration's
        /// `openAPIPath` unless a test points it elsewhere.
        public var openAPIPath: String
        public var limits: APILimits
        /// How long a graceful stop waits for running games to end and answers to go out.
        public var shutdownTimeout: Duration = .seconds(10)
        /// What the storage thread takes as now; tests move it.
        public var clock: @Sendable () -> Date = { Date() }
        /// What the rate limits take as now; tests move it.
        public var rateLimitClock: @Sendable () -> ContinuousClock.Instant = { .now }
        /// The bus to the other nodes sharing the database (`ClusterBusFactory`), not yet
        /// started: set, the server is a node (settings pushed across, games claimed, moved and
        /// swept through `ClusterRepository` and `GameHandoff`); nil, it is the only one and
        /// behaves as it always has.
        public var clusterBus: (any ClusterBus)?

        public init(configuration: ServerConfiguration) {
            self.configuration = configuration
            openAPIPath = configuration.openAPIPath
            limits = APILimits(configuration)
        }
    }

    public let options: Options
    public let metrics = Metrics()
    public let events = PlayerEvents()
    public let worker: DatabaseWorker
    /// This node's end of the cluster bus (inert without one).
    public let cluster: ClusterRelay
    public let http: HTTPServer
    /// The operator console's own listener; nil when no console port is set.
    let console: ConsoleServer?
    /// Every route of the API, as the router has them (the OpenAPI test compares them).
    public let routes: [HTTPRouter.Route]
    private let components: [any ServerComponent]
    private let logger: Logger
    /// Set when a graceful stop begins; read by /healthz on the service thread.
    private let stopping = StopFlag()
    private let stopped = Mutex(false)

    /// Opens and migrates the database (logging each migration applied) and assembles the
    /// server; `start()` then listens.
    public convenience init(options: Options, logger: Logger) throws {
        try self.init(options: options, logger: logger, components: Self.defaultComponents)
    }

    /// The parts besides the HTTP API: the WebSocket game side.
    static func defaultComponents(_ context: ServerComponentContext) -> [any ServerComponent] {
        [WebSocketHub(context)]
    }

    init(options: Options, logger: Logger,
         components makeComponents: (ServerComponentContext) -> [any ServerComponent]) throws {
        self.options = options
        self.logger = logger
        let configuration = options.configuration
        let mailbox = ServiceMailbox()
        let lease = ClusterLease(heartbeat: TimeInterval(configuration.clusterHeartbeatSeconds),
                                 lease: TimeInterval(configuration.clusterLeaseSeconds))
        // Before the storage threads: they write the round checkpoints as its process's slices.
        let membership = options.clusterBus.map { ClusterMembership(bus: $0, lease: lease, gameURL: configuration.gameURL) }
        worker = try DatabaseWorker(configuration: configuration, mailbox: mailbox, clock: options.clock,
                                    checkpointProcess: membership?.instance)
        for applied in worker.appliedMigrations {
            logger.info("applied migration", metadata: ["db.migration": applied.identifier])
        }
        // One rule for who a client is, built here only and handed to all who need it: the
        // HTTP layer's per-address connection limit, the API's rate limits, the game side's
        // per-IP limit, and the request log.
        let clientAddresses = ClientAddressResolver(trustedProxies: options.limits.trustedProxies)
        // One set of limits for both sides: a token guessed in a hello costs what one guessed over HTTP does.
        let rateLimits = RateLimits(options.limits, metrics: metrics, clock: options.rateLimitClock)
        cluster = ClusterRelay(bus: options.clusterBus, mailbox: mailbox, worker: worker, events: events,
                               metrics: metrics, logger: logger)
        let context = ServerComponentContext(configuration: configuration, worker: worker, mailbox: mailbox,
                                             metrics: metrics, events: events, logger: logger,
                                             clientAddresses: clientAddresses, rateLimits: rateLimits, cluster: cluster,
                                             membership: membership)
        components = makeComponents(context)
        // Before the server listens: no player can start a game while the last run's are ended.
        do {
            try GameRecovery.run(worker: worker, metrics: metrics, logger: logger, cluster: membership)
        } catch {
            worker.shutdown()
            throw error
        }

        var router = HTTPRouter()
        let stopping = self.stopping
        let openAPI = FileManager.default.contents(atPath: options.openAPIPath).map { Array($0) }
        if openAPI == nil {
            logger.warning("OpenAPI document not found; /api/v1/openapi.json will answer 404",
                           metadata: ["openapi.path": options.openAPIPath])
        }
        OperationsRoutes.add(to: &router, metrics: configuration.metricsEnabled ? metrics : nil, openAPI: openAPI,
                             isStopping: { stopping.isSet })
        let api = APIServices(worker: worker, events: events, logger: logger, rateLimits: rateLimits,
                              clientAddresses: clientAddresses, checkout: CheckoutClient(configuration))
        PlayerRoutes.add(to: &router, api)
        SettingsRoutes.add(to: &router, api)
        CommerceRoutes.add(to: &router, api)
        SiteRoutes.add(to: &router, accessibilityContact: configuration.accessibilityContact)
        LeaderboardRoutes.add(to: &router, api)
        DailyRoutes.add(to: &router, api)
        GameRoutes.add(to: &router, api)
        RaceRoutes.add(to: &router, api)
        for component in components { component.addRoutes(to: &router) }
        router.observer = Self.requestObserver(metrics: metrics, logger: logger, clientAddresses: clientAddresses)
        routes = router.routes

        let fontsPath: String? = FontFiles(path: configuration.fontsPath) == nil ? nil : configuration.fontsPath
        if fontsPath == nil {
            logger.warning("fonts folder not found; /fonts will answer 404 and browsers use fallback fonts "
                               + "(run scripts/install-fonts.sh to fill it)",
                           metadata: ["fonts.path": configuration.fontsPath])
        }
        http = HTTPServer(
            configuration: HTTPServerOptions(configuration, fontsPath: fontsPath),
            router: router, mailbox: mailbox, protocols: components.flatMap(\.protocols),
            clientAddresses: clientAddresses,
            onRefusal: Self.refusalObserver(metrics: metrics, logger: logger))
        if let port = configuration.consolePort {
            let parts = components
            console = ConsoleServer(configuration: configuration, port: port, worker: worker, rateLimits: rateLimits,
                                    clientAddresses: clientAddresses, events: events, gameMailbox: mailbox, metrics: metrics,
                                    liveFigures: { parts.reduce(into: [:]) { $0.merge($1.liveFigures()) { first, _ in first } } },
                                    logger: logger)
        } else {
            console = nil
        }
        registerGauges(mailbox: mailbox)
        // Last, once every part that handles a message exists: what the other nodes say from
        // now on waits in the mailbox until the service thread runs.
        do {
            try cluster.start()
        } catch {
            worker.shutdown()
            throw error
        }
    }

    /// The port being listened on; nil before `start` and after `stop`.
    public var boundPort: Int? {
        http.boundPort
    }

    /// The operator console's port (the kernel's choice when configured with 0); nil without
    /// a console, before `start` and after `stop`.
    public var consolePort: Int? {
        console?.boundPort
    }

    /// Starts listening, the console too. On failure the database worker is shut down too.
    public func start() throws(HTTPServerError) {
        do throws(HTTPServerError) {
            try http.start()
            do throws(HTTPServerError) {
                try console?.start()
            } catch {
                http.stop()
                throw error
            }
        } catch {
            cluster.stop()
            worker.shutdown()
            throw error
        }
    }

    /// Stops gracefully, in order: refuse new connections (and report 503 on /healthz); let
    /// the WebSocket side end running games and hand their scores to the worker; send what is
    /// queued for the other nodes and stop the cluster bus; let the worker
    /// finish every queued write and close the database; let the last answers go out; close
    /// every connection and end the service thread. Safe to call more than once.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        stopping.set()
        // The console first: its requests need the storage threads stopped below.
        console?.stop()
        let listening = http.boundPort != nil
        http.stopAccepting()
        let deadline = ContinuousClock.now + options.shutdownTimeout
        if listening && !components.isEmpty {
            let ended = DispatchGroup()
            for component in components {
                ended.enter()
                http.mailbox.post { component.beginShutdown { ended.leave() } }
            }
            if ended.wait(timeout: .now() + max(0, (deadline - ContinuousClock.now).seconds)) == .timedOut {
                logger.warning("running games did not end in time; stopping anyway")
            }
        }
        // After the games, whose last messages to the other nodes it still sends.
        cluster.stop()
        worker.shutdown()
        if listening, !http.waitForOpenExchanges(timeout: max(.zero, deadline - ContinuousClock.now)) {
            logger.warning("some HTTP answers were not written before the stop")
        }
        http.stop()
    }

    // MARK: - Metrics and request logs

    /// Counts and logs each answered request. Route labels are templates
    /// (`/api/v1/devices/{id}`), so the number of series stays bounded whatever clients send.
    private static func requestObserver(metrics: Metrics, logger: Logger,
                                        clientAddresses: ClientAddressResolver) -> @Sendable (HTTPRouter.Observation) -> Void {
        let requests = metrics.counter("retrorapid_http_requests_total",
                                       help: "HTTP requests answered by the router, by route template, method and status.",
                                       labelNames: ["route", "method", "status"])
        let latency = metrics.histogram("retrorapid_http_request_duration_seconds",
                                        help: "Time from a request reaching the router to its answer, database work included.",
                                        labelNames: ["route"])
        return { observation in
            let status = String(observation.response.status)
            requests.increment(observation.route, observation.request.method.rawValue, status)
            latency.observe(observation.duration.seconds, observation.route)
            let request = observation.request
            var metadata: [String: String] = [
                "http.method": request.method.rawValue,
                "http.route": observation.route,
                "http.path": request.path,
                "http.status": status,
                "http.duration_ms": String(format: "%.2f", observation.duration.seconds * 1000),
                "client.address": clientAddresses.clientAddress(peer: request.remoteAddress,
                                                                forwardedFor: request[header: "x-forwarded-for"]),
            ]
            // Behind a proxy, which one it came through.
            if metadata["client.address"] != request.remoteAddress { metadata["net.peer.address"] = request.remoteAddress }
            logger.info("request", metadata: metadata)
        }
    }

    /// Counts and logs each request the HTTP layer refused before any route or file (framing,
    /// limits, unknown methods, the per-address connection limit, heads libwebsockets dropped),
    /// under the route "refused".
    private static func refusalObserver(metrics: Metrics, logger: Logger) -> @Sendable (HTTPRefusalRecord) -> Void {
        let requests = metrics.counter("retrorapid_http_requests_total",
                                       help: "HTTP requests answered by the router, by route template, method and status.",
                                       labelNames: ["route", "method", "status"])
        return { record in
            let status = String(record.refusal.status)
            // Methods outside the API's are one label, so clients cannot add series.
            let method = HTTPMethod(rawValue: record.method)?.rawValue ?? "other"
            requests.increment("refused", method, status)
            var metadata: [String: String] = [
                "http.method": String(record.method.prefix(32)),
                "http.path": String(record.path.prefix(256)),
                "http.status": status,
                "http.error": record.refusal.code,
                "client.address": record.clientAddress,
            ]
            if record.clientAddress != record.peerAddress { metadata["net.peer.address"] = record.peerAddress }
            if record.answered {
                logger.info("request refused", metadata: metadata)
            } else {
                // libwebsockets closed it mid-head; the status is what the answer would have been.
                logger.info("request dropped without an answer", metadata: metadata)
            }
        }
    }

    private func registerGauges(mailbox: ServiceMailbox) {
        let http = self.http
        let worker = self.worker
        metrics.gauge("retrorapid_connections_open", help: "Open connections, HTTP and WebSocket.") {
            Double(http.openConnectionCount)
        }
        metrics.gauge("retrorapid_database_queue_depth", help: "Jobs waiting for the storage thread.") {
            Double(worker.queueDepth)
        }
        metrics.counter("retrorapid_database_jobs_total", help: "Jobs the storage threads have run.") {
            Double(worker.jobsRun)
        }
        metrics.counter("retrorapid_database_group_commits_total", help: "Transactions that committed several jobs at once (group commit).") {
            Double(worker.groupCommits.groups)
        }
        metrics.counter("retrorapid_database_grouped_jobs_total", help: "Jobs committed in a shared transaction (group commit).") {
            Double(worker.groupCommits.jobs)
        }
        metrics.gauge("retrorapid_service_mailbox_pending", help: "Jobs waiting for the service thread.") {
            Double(mailbox.pendingCount)
        }
        // Named here so /metrics always shows them; the WebSocket side keeps them current by
        // registering the same names (which returns these objects).
        _ = metrics.gauge("retrorapid_games_running", help: "Games running now (paused ones included).")
        _ = metrics.counter("retrorapid_game_steps_total", help: "Game steps computed; rate() gives steps per second.")
    }
}

/// A flag any thread may read, shared with the closures that need it.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .relaxed) }

    func set() {
        value.store(true, ordering: .relaxed)
    }
}
