#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets
import RetroRapidLWS
import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSupport

/// The WebSocket game side of the server: every connection on `/ws`, every running game, the
/// one timer that steps them all and the one that watches for silent clients
/// (`WebSocketHubWatchdog.swift`) (docs/PROTOCOL.md, docs/ARCHITECTURE.md).
///
/// Threading rule: everything mutable here belongs to the libwebsockets service thread. The
/// protocol callback (`webSocketProtocolCallback`), the two timers (game ticks; the watchdog
/// on silent clients) and the `DatabaseWorker`'s completions all run there; SQLite work
/// (sign-in, consuming a play, saving a game) goes to the storage thread and its result comes
/// back through the `ServiceMailbox`, so the service thread never waits on the database. The
/// only entry points for other threads are `broadcastSettings` and `endAllGames`, which post to
/// the mailbox.
public final class WebSocketHub: @unchecked Sendable {
    // @unchecked: the mutable state below is confined to the service thread (see above); the
    // lets are Sendable or used only there.

    let limits: WebSocketLimits
    /// Which pages' upgrades are taken (`--allowed-origins`).
    let originPolicy: OriginPolicy
    let worker: DatabaseWorker
    let mailbox: ServiceMailbox
    let logger: Logger
    let metrics: WebSocketMetrics
    /// Who a client is for the per-IP limit (trusted proxies), shared with the HTTP API.
    let clientAddresses: ClientAddressResolver
    /// The limit on tokens that sign nobody in, shared with the HTTP API (`hello`).
    let rateLimits: RateLimits
    /// Steps every game (ids: game sessions, `shutdownTimerID`, `checkpointTimerID`). It wakes at
    /// least every 50 ms, games or not (`TickScheduler.maximumSleep`: libev's timer cannot be
    /// moved earlier from a socket callback in libwebsockets 4.1.6).
    let scheduler = TickScheduler(maximumSleepMicroseconds: 50_000)
    /// Checks connections for silence (ids: connections). A coarse grain: its deadlines are
    /// seconds long, and a tenth of a second late is close enough.
    let watchdog = TickScheduler(granularityMicroseconds: 100_000, maximumSleepMicroseconds: 100_000)
    /// Pings connections that have gone quiet and hangs up on ones that stay so (ids:
    /// connections). A one-second grain: the limits are tens of seconds.
    let keepaliveTimer = TickScheduler(granularityMicroseconds: 1_000_000, maximumSleepMicroseconds: 1_000_000)

    // MARK: Service-thread state

    var connections: [Int: WebSocketConnection] = [:]
    /// Where messages written straight away are encoded, one for every connection.
    let sendBuffer = WebSocketSendBuffer()
    /// Open game connections per client address (the per-IP limit).
    var connectionsByIP: [String: Int] = [:]
    /// Signed-in connections of each player (settings pushes, reconnects).
    var connectionsByPlayer: [Int64: [Int]] = [:]
    var sessions: [Int: GameSession] = [:]
    /// A player has at most one game at a time.
    var sessionByPlayer: [Int64: Int] = [:]
    /// The connection a game's messages go to; none while its player is away. The connection
    /// itself, not its id: every step looks it up.
    var sessionConnection: [Int: WebSocketConnection] = [:]
    /// Players whose `start` waits for the storage thread (one at a time, across devices).
    var startingPlayers: Set<Int64> = []
    var lastID = 0
    var serviceThread: pthread_t?
    /// Set by `endAllGames`: no new game starts or resumes.
    var shuttingDown = false
    /// Games handed to the storage thread and not saved yet.
    var savesInFlight = 0
    /// A checkpoint of running games is queued or running on the storage thread.
    var checkpointInFlight = false
    /// Checkpoints saved since the last compacting one.
    var checkpointsSinceCompaction = 0
    var shutdown: ShutdownProgress?

    struct ShutdownProgress {
        var saved = 0
        var failed = 0
        var completion: @Sendable (GameShutdownSummary) -> Void
        /// Saves done: the connections are being closed, and then `completion` runs.
        var closing = false
    }

    /// The scheduler id of the shutdown's deadline (game ids are positive).
    static let shutdownTimerID = -1
    /// How long the shutdown waits for clients to take their last messages and close.
    static let shutdownFlushMicroseconds: Int64 = 2_000_000

    /// - Parameters:
    ///   - mailbox: the server's (`HTTPServer.mailbox`): what other threads post to.
    ///   - events: settings changes made over HTTP, pushed to the player's other connections.
    ///   - clientAddresses: which address a client counts as behind a reverse proxy.
    public convenience init(configuration: ServerConfiguration, worker: DatabaseWorker, mailbox: ServiceMailbox,
                            metrics: Metrics, events: PlayerEvents?, logger: Logger) {
        self.init(configuration: configuration, worker: worker, mailbox: mailbox, metrics: metrics, events: events,
                  logger: logger, clientAddresses: ClientAddressResolver(trustedProxies: configuration.trustedProxies),
                  rateLimits: RateLimits(APILimits(configuration), metrics: metrics))
    }

    init(configuration: ServerConfiguration, worker: DatabaseWorker, mailbox: ServiceMailbox,
         metrics: Metrics, events: PlayerEvents?, logger: Logger, clientAddresses: ClientAddressResolver,
         rateLimits: RateLimits) {
        limits = WebSocketLimits(configuration: configuration)
        originPolicy = OriginPolicy(allowedOrigins: configuration.allowedOrigins)
        self.worker = worker
        self.mailbox = mailbox
        self.logger = logger
        self.metrics = WebSocketMetrics(metrics)
        self.clientAddresses = clientAddresses
        self.rateLimits = rateLimits
        scheduler.onDue = { [unowned self] id, now in self.timerDue(id, now: now) }
        scheduler.afterDue = { [unowned self] in self.metrics.flush() }
        watchdog.onDue = { [unowned self] id, now in self.watchdogDue(id, now: now) }
        watchdog.afterDue = { [unowned self] in self.metrics.flush() }
        keepaliveTimer.onDue = { [unowned self] id, now in self.keepaliveDue(id, now: now) }
        keepaliveTimer.afterDue = { [unowned self] in self.metrics.flush() }
        events?.subscribeToSettingsChanges { [unowned self] playerID, deviceID, settings in
            self.pushSettings(playerID: playerID, settings: settings, exceptDevice: deviceID)
        }
        events?.subscribeToDeviceRevocations { [unowned self] playerID, deviceID in
            self.closeConnections(playerID: playerID, deviceID: deviceID)
        }
    }

    /// The game protocol for the vhost's protocol list (after the HTTP one).
    var protocolDefinition: LWSProtocolDefinition {
        LWSProtocolDefinition(
            name: WebSocketLimits.subprotocol,
            callback: webSocketProtocolCallback,
            perSessionDataSize: MemoryLayout<UnsafeMutableRawPointer?>.size,
            // Per connection: 1 KiB instead of 4 costs a few RECEIVE calls for the rare long
            // message and saves ~3 KB of every connection (docs/LIBWEBSOCKETS-4.1.6.md, issue 6's budget).
            rxBufferSize: 1024,
            owner: self,
            // Not the vhost's default: libwebsockets would then bind every new connection,
            // HTTP ones too, to this protocol. A client offering no subprotocol is refused at
            // the upgrade instead (`refusalOfUpgrade`).
            isDefault: false,
            httpCallback: lwsHTTPCallbackConfirmingGameUpgrades,
            // libwebsockets' keepalive off (0, 0; nil would mean its 5-minute default): it keeps
            // one timer per connection in a sorted list and re-inserts it on every PONG, walking
            // the list each time (a quarter of the server's CPU at 8,000 games).
            // `keepaliveTimer` does the same job on one timer.
            keepalive: (0, 0))
    }

    // MARK: - Any thread

    /// Pushes a player's new settings to their connected devices, except the one that made the
    /// change (it has the HTTP answer). Any thread.
    public func broadcastSettings(playerID: Int64, document: VersionedSettings, exceptDevice deviceID: Int64? = nil) {
        mailbox.post { [self] in pushSettings(playerID: playerID, settings: document, exceptDevice: deviceID) }
    }

    /// Ends every running game as `reason` (`.shutdown` on SIGTERM), saves each through the
    /// storage thread, sends each player their `gameOver`, closes every game connection
    /// (1001), and then calls `completion` on the service thread. From then on no game starts.
    /// Any thread; call it while the server still runs (the service thread does the work).
    public func endAllGames(reason: GameEndReason = .shutdown,
                            completion: @escaping @Sendable (GameShutdownSummary) -> Void) {
        mailbox.post { [self] in beginShutdown(reason: reason, completion: completion) }
    }

    // MARK: - Service thread: the protocol's lifetime

    /// LWS_CALLBACK_PROTOCOL_INIT: the vhost exists; the timers can be set.
    func protocolInitialised(context: OpaquePointer) {
        serviceThread = pthread_self()
        scheduler.attach(context: context)
        watchdog.attach(context: context)
        keepaliveTimer.attach(context: context)
        scheduler.schedule(Self.checkpointTimerID, at: MonotonicClock.now() + checkpointInterval)
    }

    /// LWS_CALLBACK_PROTOCOL_DESTROY: the context is going; its timer lists with it.
    func protocolDestroyed() {
        scheduler.detach()
        watchdog.detach()
        keepaliveTimer.detach()
    }

    func assertOnServiceThread() {
        assert(serviceThread.map { pthread_equal($0, pthread_self()) != 0 } ?? true,
               "WebSocketHub used off the service thread")
    }

    func nextID() -> Int {
        lastID += 1
        return lastID
    }

    // MARK: - Connections

    /// LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (through `protocols[0]`): nil lets the upgrade go on;
    /// otherwise the refusal to answer with, before any WebSocket exists.
    func refusalOfUpgrade(path: String, offeredProtocols: [String]?, clientAddress: String,
                          origin: String? = nil, host: String? = nil) -> (status: Int, error: ProtocolError)? {
        if path != WebSocketLimits.path {
            return (404, ProtocolError(.notFound, "WebSocket connections go to \(WebSocketLimits.path), not \(path)."))
        }
        if let refusal = originPolicy.refusal(origin: origin, host: host) {
            return (403, refusal)
        }
        // libwebsockets itself would drop a connection offering only unknown subprotocols
        // without a word, and give one offering none to protocols[0] (the HTTP callback).
        let offered = offeredProtocols ?? []
        if !offered.contains(WebSocketLimits.subprotocol) {
            return (400, Self.subprotocolError(offered: offered))
        }
        if shuttingDown {
            return (503, ProtocolError(.shuttingDown, "The server is restarting; connect again in a moment."))
        }
        if connectionsByIP[clientAddress, default: 0] >= limits.maxConnectionsPerIP {
            return (429, ProtocolError(.tooManyConnections,
                "Your address has \(limits.maxConnectionsPerIP) game connections open, the most allowed; close one first."))
        }
        return nil
    }

    static func subprotocolError(offered: [String]) -> ProtocolError {
        let what = offered.isEmpty ? "none" : offered.joined(separator: ", ")
        return ProtocolError(.subprotocolRequired,
            "This server speaks the WebSocket subprotocol \(WebSocketLimits.subprotocol) (Sec-WebSocket-Protocol); the client offered \(what).")
    }

    /// LWS_CALLBACK_ESTABLISHED: a new game connection. It has `helloTimeoutSeconds` to say hello.
    func established(wsi: OpaquePointer, peerAddress: String, clientAddress: String) -> WebSocketConnection {
        let connection = WebSocketConnection(id: nextID(), wsi: wsi, peerAddress: peerAddress, clientAddress: clientAddress,
                                             limits: limits, now: MonotonicClock.now())
        connections[connection.id] = connection
        connectionsByIP[clientAddress, default: 0] += 1
        metrics.connections.set(Double(connections.count))
        watchForHello(connection)
        keepaliveTimer.schedule(connection.id, at: connection.openedAt + Self.microseconds(limits.keepalivePingSeconds))
        var metadata = ["ws.connection.id": String(connection.id), "client.address": clientAddress]
        if peerAddress != clientAddress { metadata["net.peer.address"] = peerAddress }
        logger.info("game connection opened", metadata: metadata)
        return connection
    }

    /// LWS_CALLBACK_CLOSED: the connection is gone. Its game, if running, waits for the player.
    func closed(_ connection: WebSocketConnection) {
        connection.markGone()
        connections[connection.id] = nil
        watchdog.cancel(connection.id)
        keepaliveTimer.cancel(connection.id)
        if let count = connectionsByIP[connection.clientAddress] {
            connectionsByIP[connection.clientAddress] = count > 1 ? count - 1 : nil
        }
        if let identity = connection.identity {
            connectionsByPlayer[identity.playerID]?.removeAll { $0 == connection.id }
            if connectionsByPlayer[identity.playerID]?.isEmpty == true { connectionsByPlayer[identity.playerID] = nil }
        }
        metrics.connections.set(Double(connections.count))
        detachGame(of: connection)
        logger.info("game connection closed", metadata: [
            "ws.connection.id": String(connection.id), "client.address": connection.clientAddress])
        if shutdown?.closing == true && connections.isEmpty { completeShutdown() }
    }

    /// The connection's game, if it has one, waits paused for its player to come back (and
    /// ends as abandoned after the grace period): the connection dropped, or is being dropped.
    func detachGame(of connection: WebSocketConnection) {
        guard let sessionID = connection.sessionID else { return }
        connection.sessionID = nil
        guard let session = sessions[sessionID] else { return }
        sessionConnection[sessionID] = nil
        let now = MonotonicClock.now()
        session.detach(now: now, deadline: now + Int64(limits.disconnectGraceSeconds) * 1_000_000)
        reschedule(session)
        logger.info("game waits for its player", metadata: [
            "ws.connection.id": String(connection.id), "game.id": session.gameID,
            "game.grace.seconds": String(limits.disconnectGraceSeconds)])
    }

    // MARK: - Sending

    /// Sends `message` to `connection` (at once, or queued behind what waits); a client whose
    /// queue is full is dropped (1008).
    func send(_ message: ServerMessage, to connection: WebSocketConnection) {
        switch connection.send(message, using: sendBuffer) {
        case .written: metrics.sent += 1
        case .queued: metrics.sent += 1; metrics.queued += 1
        case .queueFull: dropSlowReader(connection)
        case .ignored: break
        }
    }

    /// Sends the error and, when it ends the connection, closes after it.
    func refuse(_ connection: WebSocketConnection, _ error: ProtocolError, quota: QuotaStatus? = nil) {
        metrics.errors.increment(error.code.rawValue)
        send(.error(error, quota: quota), to: connection)
        if let close = error.close { connection.close(close) }
    }

    /// The client broke RFC 6455 in a way the protocol callback caught (a bad close frame):
    /// counted as an error by the close status's name, and logged; the callback closes.
    func protocolViolation(on connection: WebSocketConnection?, _ close: ProtocolError.Close) {
        metrics.errors.increment(close.code == WebSocketCloseFrame.invalidPayload ? "invalid_payload" : "protocol_error")
        logger.info("game connection broke the WebSocket protocol", metadata: [
            "ws.connection.id": connection.map { String($0.id) } ?? "-", "ws.close.code": String(close.code),
            "ws.close.reason": close.reason])
    }

    /// Closes every game connection signed in with a device that was just signed out, as a
    /// `hello` with its token would now be refused (4401). Its game waits for the player, as
    /// after a lost connection: another of their devices can resume or quit it.
    func closeConnections(playerID: Int64, deviceID: Int64) {
        assertOnServiceThread()
        for id in connectionsByPlayer[playerID] ?? [] {
            guard let connection = connections[id], connection.identity?.deviceID == deviceID else { continue }
            refuse(connection, ProtocolError(
                .unauthorized, "This device was signed out. Sign in again to play on it.",
                close: .init(code: ProtocolError.Close.unauthorizedCode, reason: "unauthorized: device signed out")))
        }
    }

    /// Sends the new settings to every signed-in connection of the player but `exceptDevice`'s.
    func pushSettings(playerID: Int64, settings: VersionedSettings, exceptDevice: Int64?) {
        assertOnServiceThread()
        let ids = connectionsByPlayer[playerID] ?? []
        guard !ids.isEmpty else { return }
        let document = Array(settings.jsonData())
        for id in ids {
            guard let connection = connections[id], let identity = connection.identity,
                  identity.deviceID != exceptDevice else { continue }
            send(.settings(document: document), to: connection)
        }
    }
}

/// What `endAllGames` did.
public struct GameShutdownSummary: Sendable, Equatable {
    /// Games saved with their score.
    public var saved: Int
    /// Games the database refused or failed to save (logged).
    public var failed: Int
}

/// How `GameServer` assembles and stops the game side.
extension WebSocketHub: ServerComponent {
    convenience init(_ context: ServerComponentContext) {
        self.init(configuration: context.configuration, worker: context.worker, mailbox: context.mailbox,
                  metrics: context.metrics, events: context.events, logger: context.logger,
                  clientAddresses: context.clientAddresses, rateLimits: context.rateLimits)
    }

    var protocols: [LWSProtocolDefinition] { [protocolDefinition] }

    /// Service thread (posted by `GameServer.stop`): ends every game as "shutdown", saves them,
    /// says goodbye to every client, then calls `done`.
    func beginShutdown(_ done: @escaping @Sendable () -> Void) {
        beginShutdown(reason: .shutdown) { _ in done() }
    }
}
