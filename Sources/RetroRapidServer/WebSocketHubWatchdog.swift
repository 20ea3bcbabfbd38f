import RetroRapidLWS

/// The hub's watch on clients that do not keep up their side of a connection: ones that say
/// nothing in time (no `hello`; idle with no game running), which are told why and closed with
/// 4408, and ones that stop reading (their outgoing queue fills), closed with 1008. Each is
/// counted in `retrorapid_websocket_clients_dropped_total`, and a game on a dropped connection
/// waits for its player exactly as after a lost network. docs/PROTOCOL.md, "Limits and timeouts".
///
/// What "idle" means: a client that sends no message at all while no game runs on its
/// connection. A running game sends a step every interval and its player may only be listening
/// to the cues, so it is never idle; a dead peer there is found by the keepalive (no PONG to
/// our PINGs, `keepaliveDue`) and one that stops reading by its queue. A PONG does not make a
/// connection without a game busy: browsers answer PINGs by themselves, even in a forgotten tab.
///
/// Threading rule: service thread. The watchdog's timer fires from `lws_service`, and every
/// other entry point here is called from the protocol callback or a mailbox job.
extension WebSocketHub {
    // MARK: - Silence

    /// A new connection has `helloTimeoutSeconds` from the upgrade to say hello.
    func watchForHello(_ connection: WebSocketConnection) {
        watchdog.schedule(connection.id, at: connection.openedAt + Self.microseconds(limits.helloTimeoutSeconds))
    }

    /// Starts the idle clock when the connection has no running game (after `hello`, or when
    /// its game paused, ended or moved to another connection) and stops it while one runs.
    /// Call it after anything that may change that. A message needs no new deadline: it moves
    /// `heardAt`, and the check at the old deadline looks there before it closes anything.
    func refreshIdleTimeout(_ connection: WebSocketConnection) {
        guard connection.closing == nil else { return }
        if case .awaitingHello = connection.state { return }  // the hello deadline stands
        if hasRunningGame(connection) {
            connection.idleSince = nil
            return
        }
        guard connection.idleSince == nil else { return }  // the clock already runs
        let now = MonotonicClock.now()
        connection.idleSince = now
        watchdog.schedule(connection.id, at: now + Self.microseconds(limits.idleTimeoutSeconds))
    }

    /// Whether a game on the connection is taking steps (or holding a crash): not paused, not over.
    func hasRunningGame(_ connection: WebSocketConnection) -> Bool {
        guard let sessionID = connection.sessionID, let session = sessions[sessionID] else { return false }
        return session.wakeAt != nil
    }

    /// The watchdog's deadline for connection `id` has come: close it if it is still silent,
    /// or check again at its new deadline.
    func watchdogDue(_ id: Int, now: Int64) {
        guard let connection = connections[id], connection.closing == nil else { return }
        if case .awaitingHello = connection.state {
            let deadline = connection.openedAt + Self.microseconds(limits.helloTimeoutSeconds)
            guard now >= deadline else { return watchdog.schedule(id, at: deadline) }
            let seconds = limits.helloTimeoutSeconds
            return drop(connection, reason: "hello_timeout", ProtocolError(.helloTimeout,
                "No hello within \(seconds) s of connecting; closing. Send hello with your device token first.",
                close: .init(code: ProtocolError.Close.timeoutCode, reason: "hello timeout: no hello within \(seconds) s")))
        }
        guard let since = connection.idleSince else { return }  // a game runs: not watched
        let deadline = max(since, connection.heardAt) + Self.microseconds(limits.idleTimeoutSeconds)
        guard now >= deadline else { return watchdog.schedule(id, at: deadline) }
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
    func keepaliveDue(_ id: Int, now: Int64) {
        guard let connection = connections[id], connection.closing == nil else { return }
        let alive = max(connection.heardAt, connection.pongAt)
        let quiet = now - alive
        if quiet >= Self.microseconds(limits.keepaliveHangupSeconds) {
            logger.info("closing a connection that answers nothing", metadata: [
                "ws.connection.id": String(id), "ws.drop": "keepalive", "client.address": connection.clientAddress])
            metrics.dropped.increment("keepalive")
            connection.close(.init(code: ProtocolError.Close.goingAway, reason: "no answer to pings"), dropQueue: true)
            detachGame(of: connection)
            return
        }
        if quiet >= Self.microseconds(limits.keepalivePingSeconds) {
            connection.ping()
            keepaliveTimer.schedule(id, at: alive + Self.microseconds(limits.keepaliveHangupSeconds))
        } else {
            keepaliveTimer.schedule(id, at: alive + Self.microseconds(limits.keepalivePingSeconds))
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
        detachGame(of: connection)
    }

    // MARK: -

    /// Says why (the error message goes out before the close frame) and closes.
    private func drop(_ connection: WebSocketConnection, reason: String, _ error: ProtocolError) {
        // With no room for the error, the client is not reading either: that is the drop to count.
        guard connection.queuedCount < limits.maxQueuedMessages else { return dropSlowReader(connection) }
        logger.info("closing a silent game connection", metadata: [
            "ws.connection.id": String(connection.id), "ws.drop": reason, "client.address": connection.clientAddress])
        metrics.dropped.increment(reason)
        refuse(connection, error)
    }

    static func microseconds(_ seconds: Int) -> Int64 {
        Int64(seconds) * 1_000_000
    }
}
