#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RetroRapidLWS
import Foundation
import RetroRapidLWS
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSupport

/// The WebSocket game side of the server, as the protocol callback sees it: it takes each
/// connection's lifetime events and messages and routes them to the part that owns them
/// (docs/PROTOCOL.md, docs/ARCHITECTURE.md):
///
/// - `ConnectionRegistry`: every open connection, its address and player indexes, sending;
/// - `MatchHost`: every running match (`Match`, its seats), their step timer, checkpoints and the
///   watchdog on silent connections (`ConnectionWatchdog`);
/// - `GameRecorder`: finished games saved, the shutdown's summary;
/// - `WatchHost`: `watch` and `stopWatching`; `ReplayHost`: replays and ghost races;
/// - `GameHandoff` (in a cluster): games moving between nodes;
/// - `RoomHost`: race rooms and quick races;
/// - `ConnectionSignIn`: `hello` (a sign-in is the connection's, not a game's).
///
/// It is their composition root: it builds each, and gives each the narrow view of a sibling
/// it needs (docs/ARCHITECTURE.md, "Threads and who owns what").
///
/// Itself it holds only what decides where a message goes: the upgrade checks, the rate limit
/// and parse of every message, and the settings pushes and device revocations that reach a
/// player's connections.
///
/// Threading rule: everything mutable here and in the parts belongs to the libwebsockets
/// service thread. The protocol callback (`webSocketProtocolCallback`), the timers and the
/// `DatabaseWorker`'s completions all run there; SQLite work (sign-in, consuming a play, saving
/// a game) goes to the storage thread and its result comes back through the `ServiceMailbox`,
/// so the service thread never waits on the database. The only entry points for other threads
/// are `broadcastSettings` and `endAllGames`, which post to the mailbox.
public final class WebSocketHub: @unchecked Sendable {
    // @unchecked: the mutable state (here and in the parts) is confined to the service thread
    // (see above); the lets are Sendable or used only there.

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
    let connections: ConnectionRegistry
    /// Every running match: starting, stepping, delivering, ending, shutting down.
    let matchHost: MatchHost
    /// Connections watching seats (`watch`, `stopWatching`, the `watchers` counts).
    let watching: WatchHost
    /// Replays of stored games and ghost races (`replay`, `replayControl`, `raceGhost`).
    let replays: ReplayHost
    /// In cluster mode, who holds each game and moving games between nodes; nil alone.
    let handoff: GameHandoff?
    /// Race rooms and quick races, beside the matches they ask `matchHost` for.
    let rooms: RoomHost
    let signIn: ConnectionSignIn

    private var serviceThread: pthread_t?

    /// Everything comes from the server's one context (`GameServer` makes it): the
    /// configuration itself, read where each limit is used (`WebSocketLimits`), the storage
    /// thread, the mailbox other threads post to, the player events (settings changed over
    /// HTTP are pushed to the player's other connections; signed-out devices are closed), and
    /// the client-address rule and sign-in limits the HTTP API shares.
    init(_ context: ServerComponentContext) {
        limits = WebSocketLimits(configuration: context.configuration)
        originPolicy = OriginPolicy(allowedOrigins: context.configuration.allowedOrigins)
        worker = context.worker
        mailbox = context.mailbox
        logger = context.logger
        metrics = WebSocketMetrics(context.metrics)
        clientAddresses = context.clientAddresses
        rateLimits = context.rateLimits
        connections = ConnectionRegistry(limits: limits, metrics: metrics, nodeDirectory: context.membership?.directory)
        // The composition root: the match registry and its siblings, each given the narrow
        // view of another it needs (docs/ARCHITECTURE.md, "Threads and who owns what").
        let role = NodeRole(context.membership)
        let recorder = GameRecorder(worker: worker, connections: connections, metrics: metrics, logger: logger)
        let matchHost = MatchHost(role: role, limits: limits, connections: connections, recorder: recorder,
                                  worker: worker, metrics: metrics, logger: logger)
        let watching = WatchHost(role: role, limits: limits, connections: connections, worker: worker,
                                 timers: matchHost.timers, logger: logger, matches: matchHost)
        let replays = ReplayHost(role: role, limits: limits, connections: connections, recorder: recorder, worker: worker,
                                 logger: logger, matches: matchHost, seatWatchers: watching)
        let handoff = context.membership.map { [worker, connections, limits, logger] membership in
            GameHandoff(cluster: membership, relay: context.cluster, matches: matchHost, checkpoints: matchHost.checkpoints,
                        timers: matchHost.timers, worker: worker, connections: connections, limits: limits, logger: logger)
        }
        matchHost.seatWatchers = watching
        matchHost.remoteGames = handoff
        watching.watcherLeft = { [unowned replays] match, seat in replays.watcherLeft(seat, of: match) }
        connections.onQueueFull = { [unowned matchHost] connection in matchHost.watchdog.dropSlowReader(connection) }
        (self.matchHost, self.watching, self.replays, self.handoff) = (matchHost, watching, replays, handoff)
        rooms = RoomHost(configuration: context.configuration, connections: connections, matchHost: matchHost,
                         watching: watching, worker: worker, logger: logger)
        signIn = ConnectionSignIn(limits: limits, connections: connections, matchHost: matchHost, worker: worker,
                                  rateLimits: rateLimits, metrics: metrics, logger: logger, gameURL: context.configuration.gameURL)
        if handoff != nil {
            // The relay owns the bus (started and stopped by GameServer) and hands every message
            // from another node to its observers on the service thread.
            context.cluster.subscribe { [unowned self] envelope in self.clusterMessage(envelope) }
        }
        let events = context.events
        events.subscribeToSettingsChanges { [unowned self] playerID, deviceID, settings in
            self.pushSettings(playerID: playerID, settings: settings, exceptDevice: deviceID)
        }
        events.subscribeToDeviceRevocations { [unowned self] playerID, deviceID in
            self.closeConnections(playerID: playerID, deviceID: deviceID)
        }
    }

    /// The game protocol for the vhost's protocol list (after the HTTP one).
    var protocolDefinition: LWSProtocolDefinition {
        LWSProtocolDefinition(
            name: WebSocketLimits.subprotocol,
            callback: webSocketProtocolCallback,
            // None: the connection's object is found through `LWSConnection.userPointer`.
            perSessionDataSize: 0,
            // libwebsockets allocates this much (plus LWS_PRE) for every connection, but a data
            // frame's payload goes to RECEIVE straight from the thread's read buffer, in pieces
            // of at most this size; only control frames (at most 125 bytes) are gathered in it.
            // 256 holds every message this protocol reads, in ASCII with its fields at their
            // longest (a hello with a 128-character client is ~210 bytes): each still comes in
            // one RECEIVE, and a longer one in several, counted to `maxMessageBytes` all the
            // same. Every connection pays for this buffer, so it is no larger than that
            // (docs/LIBWEBSOCKETS-4.1.6.md).
            rxBufferSize: 256,
            // What one `lws_write` hands the socket at once defaults to `rxBufferSize`: 1,024
            // instead, so a small read buffer does not split a message into more writes.
            txPacketSize: 1024,
            owner: self,
            // Not the vhost's default: libwebsockets would then bind every new connection,
            // HTTP ones too, to this protocol. A client offering no subprotocol is refused at
            // the upgrade instead (`refusalOfUpgrade`).
            isDefault: false,
            httpCallback: lwsHTTPCallbackConfirmingGameUpgrades,
            // libwebsockets' keepalive off (0, 0; nil would mean its 5-minute default): it keeps
            // one timer per connection in a sorted list and re-inserts it on every PONG, walking
            // the list each time (a quarter of the server's CPU at 8,000 games).
            // `ConnectionWatchdog`'s keepalive does the same job on one timer.
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
        matchHost.attach(context: context)
        rooms.attach(context: context)
    }

    /// A message from another node (bus thread → `ClusterRelay` → mailbox → here, the service
    /// thread).
    func clusterMessage(_ envelope: ClusterEnvelope) {
        assertOnServiceThread()
        switch envelope.message {
        case .releaseGame, .gameReleased, .gameStays:
            handoff?.received(envelope)
        case .settingsChanged, .deviceRevoked:
            break  // ClusterRelay turns these into local PlayerEvents itself
        }
    }

    /// LWS_CALLBACK_PROTOCOL_DESTROY: the context is going; its timer lists with it.
    func protocolDestroyed() {
        matchHost.detach()
        rooms.detach()
    }

    func assertOnServiceThread() {
        assert(serviceThread.map { pthread_equal($0, pthread_self()) != 0 } ?? true,
               "WebSocketHub used off the service thread")
    }

    func beginShutdown(reason: GameEndReason, completion: @escaping @Sendable (GameShutdownSummary) -> Void) {
        assertOnServiceThread()
        guard let handoff else { return matchHost.beginShutdown(reason: reason, completion: completion) }
        matchHost.beginShutdown(reason: reason) { summary in
            // Every game is stored: this node's row goes (GameServer stops the bus after).
            handoff.leave()
            completion(summary)
        }
    }

    // MARK: - Connections

    /// LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (through `protocols[0]`): nil lets the upgrade go on;
    /// otherwise the refusal to answer with, before any WebSocket exists.
    func refusalOfUpgrade(path: String, offeredProtocols: [String]?, clientAddress: String,
                          origin: String? = nil, host hostHeader: String? = nil) -> (status: Int, error: ProtocolError)? {
        if path != WebSocketLimits.path {
            return (404, ProtocolError(.notFound, "WebSocket connections go to \(WebSocketLimits.path), not \(path)."))
        }
        if let refusal = originPolicy.refusal(origin: origin, host: hostHeader) {
            return (403, refusal)
        }
        // libwebsockets itself would drop a connection offering only unknown subprotocols
        // without a word, and give one offering none to protocols[0] (the HTTP callback).
        let offered = offeredProtocols ?? []
        if !offered.contains(WebSocketLimits.subprotocol) {
            return (400, Self.subprotocolError(offered: offered))
        }
        if matchHost.shuttingDown {
            return (503, ProtocolError(.shuttingDown, "The server is restarting; connect again in a moment."))
        }
        if let refusal = connections.refusal(clientAddress: clientAddress) {
            return (429, refusal)
        }
        return nil
    }

    static func subprotocolError(offered: [String]) -> ProtocolError {
        let what = offered.isEmpty ? "none" : offered.joined(separator: ", ")
        return ProtocolError(.subprotocolRequired,
            "This server speaks the WebSocket subprotocol \(WebSocketLimits.subprotocol) (Sec-WebSocket-Protocol); the client offered \(what).")
    }

    /// LWS_CALLBACK_ESTABLISHED: a new game connection (made by the callback with an id from
    /// `connections.nextID()`). It has `helloTimeoutSeconds` to say hello.
    func established(_ connection: WebSocketConnection) {
        connections.add(connection)
        matchHost.watchdog.watch(connection)
        var metadata = ["ws.connection.id": String(connection.id), "client.address": connection.clientAddress]
        if connection.peerAddress != connection.clientAddress { metadata["net.peer.address"] = connection.peerAddress }
        logger.info("game connection opened", metadata: metadata)
    }

    /// LWS_CALLBACK_CLOSED: the connection is gone. Its game, if running, waits for the player.
    func closed(_ connection: WebSocketConnection) {
        connection.markGone()
        connections.remove(connection)
        matchHost.connectionClosed(connection)
        rooms.connectionClosed(connection)
        logger.info("game connection closed", metadata: [
            "ws.connection.id": String(connection.id), "client.address": connection.clientAddress])
        matchHost.connectionsMayHaveEmptied()
    }

    /// Sends the error and, when it ends the connection, closes after it.
    func refuse(_ connection: WebSocketConnection, _ error: ProtocolError, quota: QuotaStatus? = nil) {
        connections.refuse(connection, error, quota: quota)
    }

    /// The client broke RFC 6455 in a way the protocol callback caught (a bad close frame):
    /// counted as an error by the close status's name, and logged; the callback closes.
    func protocolViolation(on connection: WebSocketConnection?, _ close: ProtocolError.Close) {
        metrics.errors.increment(close.code == WebSocketCloseFrame.invalidPayload ? "invalid_payload" : "protocol_error")
        logger.info("game connection broke the WebSocket protocol", metadata: [
            "ws.connection.id": connection.map { String($0.id) } ?? "-", "ws.close.code": String(close.code),
            "ws.close.reason": close.reason])
    }

    // MARK: - Messages

    /// One complete message from `connection`. Every refusal is an `error` message that changes
    /// nothing; only a bad token, flooding and (in the callback) an oversized message end the
    /// connection.
    func received(_ bytes: [UInt8], on connection: WebSocketConnection) {
        assertOnServiceThread()
        metrics.receivedCount += 1
        defer { metrics.flush() }
        let now = MonotonicClock.now()
        connection.heardAt = now  // any message, even one refused below, is a client that is there
        // The rate limit comes before parsing, so a flood costs the server next to nothing.
        guard connection.rate.take(now: now) else {
            connection.refusedInARow += 1
            if connection.refusedInARow == 1 {
                refuse(connection, ProtocolError(.rateLimited,
                    "Too many messages: at most \(limits.inputsPerSecond) a second (\(limits.inputBurst) in a burst). This one was ignored."))
            } else if connection.refusedInARow >= limits.floodLimit {
                refuse(connection, ProtocolError(.flooding, "Too many messages over the limit; closing.",
                    close: .init(code: ProtocolError.Close.policyViolation, reason: "flooding: too many messages")))
            }
            return
        }
        connection.refusedInARow = 0
        let message: ClientMessage
        if connection.identity != nil, let move = MoveMessageReader.read(bytes) {
            // The usual move, read without the general reader (which would read it the same).
            message = move
        } else {
            do throws(ProtocolError) {
                let raw = try ClientMessage.read(bytes)
                // Before welcome, a message of any type but hello is hello_first whatever its fields
                // (unknown types too); only what is not JSON, or not a message, says so instead.
                if connection.identity == nil, let type = raw.type, type != "hello", !raw.wrongFields.contains(.type) {
                    throw helloFirst(on: connection, type: ClientMessage.typeNames.contains(type) ? type : nil)
                }
                message = try raw.message()
            } catch {
                refuse(connection, error)
                matchHost.refreshIdleTimeout(connection)
                return
            }
        }
        route(message, on: connection, now: now)
        matchHost.refreshIdleTimeout(connection)
    }

    /// Who handles what: `hello` to the sign-in, games to the match host, `ping` here.
    private func route(_ message: ClientMessage, on connection: WebSocketConnection, now: Int64) {
        switch (connection.state, message) {
        case (.awaitingHello, .hello(let token, let client)):
            signIn.hello(token: token, client: client, on: connection)
        case (.awaitingHello, _), (.authenticating, _):
            refuse(connection, helloFirst(on: connection, type: message.typeName))
        case (.ready, .hello):
            refuse(connection, ProtocolError(.alreadyAuthenticated, "This connection has already said hello.", inReplyTo: "hello"))
        case (.ready(let identity), .start(let level, let practice, let road)):
            matchHost.start(level: level, practice: practice, road: road, for: identity, on: connection)
        case (.ready, .move(let direction, let seenStep)):
            matchHost.withGame(of: connection, replyingTo: "move") { session in
                session.move(direction, seenStep: seenStep, now: now)
            }
        case (.ready, .pause):
            matchHost.withGame(of: connection, replyingTo: "pause") { session in session.pause(now: now) }
        case (.ready(let identity), .resume):
            matchHost.resume(for: identity, on: connection, now: now)
            rooms.resumed(for: identity, on: connection)
        case (.ready(let identity), .quit):
            matchHost.quit(for: identity, on: connection, now: now)
        case (.ready, .ping):
            connections.send(.pong, to: connection)
        case (.ready(let identity), .openRoom(let level, let seats, let practice)):
            rooms.openRoom(level: level, seats: seats, practice: practice, for: identity, on: connection)
        case (.ready(let identity), .joinRoom(let code)):
            rooms.joinRoom(code: code, for: identity, on: connection)
        case (.ready(let identity), .ready(let ready)):
            rooms.ready(ready, for: identity, on: connection)
        case (.ready(let identity), .startRace):
            rooms.startRace(for: identity, on: connection)
        case (.ready(let identity), .leaveRoom):
            rooms.leaveRoom(for: identity, on: connection)
        case (.ready(let identity), .quickRace(let level)):
            rooms.quickRace(level: level, for: identity, on: connection)
        case (.ready(let identity), .leaveQueue):
            rooms.leaveQueue(for: identity, on: connection)
        case (.ready(let identity), .watch(let target)):
            rooms.watch(target, for: identity, on: connection)
        case (.ready, .stopWatching):
            watching.stopWatching(on: connection)
        case (.ready(let identity), .replay(let gameID)):
            replays.replay(gameID: gameID, for: identity, on: connection)
        case (.ready, .replayControl(let control)):
            replays.control(control, on: connection, now: now)
        case (.ready(let identity), .raceGhost(let gameID)):
            replays.raceGhost(gameID: gameID, for: identity, on: connection)
        }
    }

    /// The refusal of anything but `hello` before `welcome`.
    private func helloFirst(on connection: WebSocketConnection, type: String?) -> ProtocolError {
        if case .authenticating = connection.state {
            return ProtocolError(.helloFirst, "Wait for welcome before sending anything else.", inReplyTo: type)
        }
        return ProtocolError(.helloFirst, "Send hello with your device token first.", inReplyTo: type)
    }

    // MARK: - Player events

    /// Closes every game connection signed in with a device that was just signed out, as a
    /// `hello` with its token would now be refused (4401). Its game waits for the player, as
    /// after a lost connection: another of their devices can resume or quit it.
    func closeConnections(playerID: Int64, deviceID: Int64) {
        assertOnServiceThread()
        for connection in connections.connections(of: playerID) where connection.identity?.deviceID == deviceID {
            refuse(connection, ProtocolError(
                .unauthorized, "This device was signed out. Sign in again to play on it.",
                close: .init(code: ProtocolError.Close.unauthorizedCode, reason: "unauthorized: device signed out")))
        }
    }

    /// Sends the new settings to every signed-in connection of the player but `exceptDevice`'s.
    func pushSettings(playerID: Int64, settings: VersionedSettings, exceptDevice: Int64?) {
        assertOnServiceThread()
        let receivers = connections.connections(of: playerID)
        guard !receivers.isEmpty else { return }
        let document = Array(settings.jsonData())
        for connection in receivers {
            guard let identity = connection.identity, identity.deviceID != exceptDevice else { continue }
            connections.send(.settings(document: document), to: connection)
        }
    }
}

/// How `GameServer` assembles and stops the game side.
extension WebSocketHub: ServerComponent {
    var protocols: [LWSProtocolDefinition] { [protocolDefinition] }

    /// GET /api/v1/rooms/{code} reads the rooms here (`RoomRoutes`).
    func addRoutes(to router: inout HTTPRouter) {
        RoomRoutes.add(to: &router, rooms: rooms, nodeID: matchHost.role.nodeID)
    }

    /// Service thread (posted by `GameServer.stop`): ends every game as "shutdown", saves them,
    /// says goodbye to every client, then calls `done`.
    func liveFigures() -> [String: Int] {
        assertOnServiceThread()
        return ["raceRooms": rooms.registry.count, "watchers": matchHost.watcherCount]
    }

    func beginShutdown(_ done: @escaping @Sendable () -> Void) {
        beginShutdown(reason: .shutdown) { _ in done() }
    }
}

/// The names `hello_first` and other refusals reply to.
extension ClientMessage {
    var typeName: String {
        switch self {
        case .hello: "hello"
        case .start: "start"
        case .move: "move"
        case .pause: "pause"
        case .resume: "resume"
        case .quit: "quit"
        case .ping: "ping"
        case .openRoom: "openRoom"
        case .joinRoom: "joinRoom"
        case .ready: "ready"
        case .startRace: "startRace"
        case .leaveRoom: "leaveRoom"
        case .quickRace: "quickRace"
        case .leaveQueue: "leaveQueue"
        case .watch: "watch"
        case .stopWatching: "stopWatching"
        case .replay: "replay"
        case .replayControl: "replayControl"
        case .raceGhost: "raceGhost"
        }
    }
}
