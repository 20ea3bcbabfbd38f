import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// The operator console (docs/OPERATIONS.md, "The console"): its pages (`--console-root`)
/// and its JSON API on a listener of its own (`--console-host`, `--console-port`), never on
/// the players' address, so a player who tries a console URL on the game's address finds
/// nothing, and the console can be kept on loopback or behind an allow list.
///
/// It shares the game server's storage threads, rate limits and player events, and runs its
/// own libwebsockets context on its own service thread: a slow console request never holds
/// a game step.
///
/// Threading: `start`/`stop` from the thread that starts and stops the `GameServer`.
final class ConsoleServer: Sendable {
    let http: HTTPServer
    let sessions: ConsoleSessions
    let history: ConsoleHistory
    private let sample: @Sendable () -> Void
    private let gameMailbox: ServiceMailbox

    init(configuration: ServerConfiguration, port: Int, worker: DatabaseWorker, rateLimits: RateLimits,
         clientAddresses: ClientAddressResolver, events: PlayerEvents, gameMailbox: ServiceMailbox, metrics: Metrics,
         liveFigures: @escaping @Sendable () -> [String: Int], logger: Logger) {
        let sessions = ConsoleSessions()
        self.sessions = sessions
        let history = ConsoleHistory()
        self.history = history
        let gate = ConsoleGate(worker: worker, sessions: sessions, logger: logger)
        var router = HTTPRouter.standard
        ConsoleRoutes.add(to: &router, ConsoleRoutes.Services(
            gate: gate, rateLimits: rateLimits, clientAddresses: clientAddresses, events: events,
            gameMailbox: gameMailbox, secureCookies: false, logger: logger, metrics: metrics,
            nodeID: configuration.resolvedNodeID, history: history, site: configuration.publicBaseURL,
            liveFigures: liveFigures))
        self.gameMailbox = gameMailbox
        sample = {
            let totals = metrics.totals(ConsoleRoutes.OverviewJSON.Node.metricNames)
            let node = ConsoleRoutes.OverviewJSON.Node(id: "", totals: totals, live: [:])
            history.record(ConsoleHistory.Sample(at: Date(), gamesRunning: node.gamesRunning, gameConnections: node.gameConnections,
                                                 gamesEndedTotal: node.gamesEndedSinceStart))
        }
        http = HTTPServer(
            configuration: HTTPServerOptions(host: configuration.consoleHost, port: port, webRoot: configuration.consoleRoot,
                                             eventLoop: configuration.eventLoop,
                                             requestLimits: HTTPRequestLimits(configuration: configuration)),
            router: router, mailbox: ServiceMailbox(), protocols: [], clientAddresses: clientAddresses)
    }

    var boundPort: Int? { http.boundPort }

    /// Listens. Its errors name the console's own settings, not the players' listener's.
    func start() throws(HTTPServerError) {
        do {
            try http.start()
            history.start(posting: sample, to: gameMailbox)
        } catch where error.code == .webRootMissing {
            let path = URL(fileURLWithPath: http.configuration.webRoot).standardizedFileURL.path
            throw HTTPServerError(.webRootMissing,
                "The operator console's folder \(path) is not a directory. Set --console-root to the folder that holds the console's sign-in.html.")
        } catch {
            let place = "\(http.configuration.host):\(http.configuration.port)"
            throw HTTPServerError(error.code, "The operator console (--console-host, --console-port \(place)): " + error.message)
        }
    }

    func stop() {
        history.stop()
        http.stop()
    }
}
