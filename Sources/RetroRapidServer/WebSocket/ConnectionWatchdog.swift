import RetroRapidLWS
import RetroRapidSupport

/// The watch on clients that do not keep up their side of a connection: ones that say
/// nothing in time (no `hello`; idle with no game running), which are told why and closed with
/// 4408, ones that answer nothing (the keepalive), and ones that stop reading (their outgoing
/// queue fills), closed with 1008. Each is counted in
/// `retrorapid_websocket_clients_dropped_total`, and a game on a dropped connection waits for
/// its player exactly as after a lost network (`detachGame`, the `MatchHost`'s).
/// docs/PROTOCOL.md, "Limits and timeouts".
///
/// What "idle" means: a client that sends no message at all while no game runs on its
/// connection. A running game sends a step every interval and its player may only be listening
/// to the cues, so it is never idle; a dead peer there is found by the keepalive (no PONG to
/// our PINGs, `keepaliveDue`) and one that stops reading by its queue. A connection watching a
/// game counts as one that runs a game (`WatchHost`). A PONG does not make a
/// connection without a game busy: browsers answer PINGs by themselves, even in a forgotten tab.
///
/// Threading rule: owned by the `MatchHost` on the libwebsockets service thread. Its two timers
/// fire from `lws_service`, and every other entry point is called from the protocol callback
/// or a mailbox job.
final class ConnectionWatchdog {
    let limits: WebSocketLimits
    let connections: ConnectionRegistry
    let metrics: WebSocketMetrics
    let logger: Logger
    /// The game on a dropped connection waits for its player (set by the `MatchHost`).
    var detachGame: (WebSocketConnection) -> Void = { _ in }

    /// Checks connections for silence (ids: connections). A coarse grain: its deadlines are
    /// seconds long, and a tenth of a second late is close enough.
    private let silence = TickScheduler(granularityMicroseconds: 100_000, maximumSleepMicroseconds: 100_000)
    /// Pings connections that have gone quiet and hangs up on ones that stay so (ids:
    /// connections). A one-second grain: the limits are tens of seconds.
    private let keepalive = TickScheduler(granularityMicroseconds: 1_000_000, maximumSleepMicroseconds: 1_000_000)

    init(limits: WebSocketLimits, connections: ConnectionRegistry, metrics: WebSocketMetrics, logger: Logger) {
        self.limits = limits
        self.connections = connections
        self.metrics = metrics
        self.logger = logger
        silence.onDue = { [unowned self] id, now in self.silenceDue(id, now: now) }
        silence.afterDue = { [unowned self] in self.metrics.flush() }
        keepalive.onDue = { [unowned self] id, now in self.keepaliveDue(id, now: now) }
        keepalive.afterDue = { [unowned self] in self.metrics.flush() }
    }

    /// LWS_CALLBACK_PROTOCOL_INIT / _DESTROY: the timers live as long as the context.
    func attach(context: OpaquePointer) {
        silence.attach(context: context)
        keepalive.attach(context: context)
    }

    func detach() {
        silence.detach()
        keepalive.detach()
    }

    // MARK: - A connection's lifetime

    /// A new connection: it has `helloTimeoutSeconds` from the upgrade to say hello, and the
    /// keepalive starts watching it.
    func watch(_ connection: WebSocketConnection) {
        silence.schedule(connection.id, at: connection.openedAt + Self.microseconds(limits.helloTimeoutSeconds))
        keepalive.schedule(connection.id, at: connection.openedAt + Self.microseconds(limits.keepalivePingSeconds))
    }

    /// The connection closed: nothing more to watch.
    func forget(_ connection: WebSocketConnection) {
        silence.cancel(connection.id)
        keepalive.cancel(connection.id)
    }

    // MARK: - Silence

    /// Starts the idle clock when the connection has no running game (after `hello`, or when
    /// its game paused, ended or moved to another connection) and stops it while one runs;
    /// `gameRunning` (the `MatchHost`'s) says which, asked only when it matters. A message
    /// needs no new deadline: it moves `heardAt`, and the check at the old deadline looks there
    /// before it closes anything.
    func refreshIdleTimeout(_ connection: WebSocketConnection, gameRunning: () -> Bool) {
        guard connection.closing == nil else { return }
        if case .awaitingHello = connection.state { return }  // the hello deadline stands
        if gameRunning() {
            connection.idleSince = nil
            return
        }
        guard connection.idleSince == nil else { return }  // the clock already runs
        let now = MonotonicClock.now()
        connection.idleSince = now
        silence.schedule(connection.id, at: now + Self.microseconds(limits.idleTimeoutSeconds))
    }

    /// The silence deadline for connection `id` has come: close it if it is still silent, or
    /// check again at its new deadline.
    private func silenceDue(_ id: Int, now: Int64) {
        guard let connection = connections[id], connection.closing == nil else { return }
        if case .awaitingHello = connection.state {
            let deadline = connection.openedAt + Self.microseconds(limits.helloTimeoutSeconds)
            guard now >= deadline else { return silence.schedule(id, at: deadline) }
            let seconds = limits.helloTimeoutSeconds
            return drop(connection, reason: "hello_timeout", ProtocolError(.helloTimeout,
                "No hello within \(seconds) s of connecting; closing. Send hello with your device token first.",
                close: .init(code: ProtocolError.Close.timeoutCode, reason: "hello timeout: no hello within \(seconds) s")))
        }
        guard let since = connection.idleSince else { return }  // a game runs: not watched
        let deadline = max(since, connection.heardAt) + Self.microseconds(limits.idleTimeoutSeconds)
        guard now >= deadline else { return silence.schedule(id, at: deadline) }
        let seconds = limits.idleTimeoutSeconds
        drop(connection, reason: "idle_timeout", ProtocolError(.idleTimeout,
            "Nothing received for \(seconds) s with no game running; closing. Send ping now and then to stay connected.",
            close: .init(code: ProtocolError.Close.timeoutCode, reason: "idle timeout: no message for \(seconds) s")))
    }

    // MARK: - Keepalive

    /// The keepalive's deadline for connection `id`: quiet for `keepalivePingSeconds` (no
    /// message, no PONG) gets a PING; quiet for `keepaliveHangupSeconds` is a dead peer (a
    /// phone that lost its network sends no FIN), closed without a word, since nobody reads it.
    /// Its game, if one runs, then waits for the player as after any lost connection.
    private func keepaliveDue(_ id: Int, now: Int64) {
        guard let connection = connections[id], connection.closing == nil else { return }
        let alive = max(connection.heardAt, connection.pongAt)
        let quiet = now - alive
        if quiet >= Self.microseconds(limits.keepaliveHangupSeconds) {
            logger.info("closing a connection that answers nothing", metadata: [
                "ws.connection.id": String(id), "ws.drop": "keepalive", "client.address": connection.clientAddress])
            metrics.dropped.increment("keepalive")
            connection.close(.init(code: ProtocolError.Close.goingAway, reason: "no answer to pings"), dropQueue: true)
            detachGame(connection)
            return
        }
        if quiet >= Self.microseconds(limits.keepalivePingSeconds) {
            connection.ping()
            keepalive.schedule(id, at: alive + Self.microseconds(limits.keepaliveHangupSeconds))
        } else {
            keepalive.schedule(id, at: alive + Self.microseconds(limits.keepalivePingSeconds))
        }
    }

    // MARK: - Slow readers

    /// The client's queue is full: it has stopped reading (and the kernel's buffer for it is
    /// full too). It is closed without what is queued (1008), and its game waits for the
    /// player now rather than when the socket finally closes, so no step goes by unseen.
    func dropSlowReader(_ connection: WebSocketConnection) {
        guard connection.closing == nil else { return }
        logger.notice("dropping a client that does not read", metadata: [
            "ws.connection.id": String(connection.id), "ws.queue": String(connection.queuedCount),
            "client.address": connection.clientAddress])
        metrics.dropped.increment("slow_reader")
        connection.close(.init(code: ProtocolError.Close.policyViolation,
                               reason: "too slow: \(limits.maxQueuedMessages) messages unread"), dropQueue: true)
        detachGame(connection)
    }

    // MARK: -

    /// Says why (the error message goes out before the close frame) and closes.
    private func drop(_ connection: WebSocketConnection, reason: String, _ error: ProtocolError) {
        // With no room for the error, the client is not reading either: that is the drop to count.
        guard connection.queuedCount < limits.maxQueuedMessages else { return dropSlowReader(connection) }
        logger.info("closing a silent game connection", metadata: [
            "ws.connection.id": String(connection.id), "ws.drop": reason, "client.address": connection.clientAddress])
        metrics.dropped.increment(reason)
        connections.refuse(connection, error)
    }

    static func microseconds(_ seconds: Int) -> Int64 {
        Int64(seconds) * 1_000_000
    }
}
