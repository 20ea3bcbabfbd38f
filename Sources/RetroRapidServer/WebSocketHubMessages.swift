import CLibWebSockets
import RetroRapidLWS
import Foundation
import RetroRapidRules
import RetroRapidDomain

/// What the hub does with each message a client sends (docs/PROTOCOL.md). Service thread.
///
/// Every refusal is an `error` message that changes nothing; only a bad token, flooding and
/// (in the callback) an oversized message end the connection.
extension WebSocketHub {
    /// One complete message from `connection`.
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
            refreshIdleTimeout(connection)
            return
        }
        handle(message, on: connection, now: now)
        refreshIdleTimeout(connection)
    }

    private func handle(_ message: ClientMessage, on connection: WebSocketConnection, now: Int64) {
        switch (connection.state, message) {
        case (.awaitingHello, .hello(let token, let client)):
            hello(token: token, client: client, on: connection)
        case (.awaitingHello, _), (.authenticating, _):
            refuse(connection, helloFirst(on: connection, type: message.typeName))
        case (.ready, .hello):
            refuse(connection, ProtocolError(.alreadyAuthenticated, "This connection has already said hello.", inReplyTo: "hello"))
        case (.ready(let identity), .start(let level, let practice)):
            start(level: level, practice: practice, for: identity, on: connection)
        case (.ready, .move(let direction, let seenStep)):
            withGame(of: connection, replyingTo: "move") { session in
                session.move(direction, seenStep: seenStep, now: now)
            }
        case (.ready, .pause):
            withGame(of: connection, replyingTo: "pause") { session in session.pause(now: now) }
        case (.ready(let identity), .resume):
            resume(for: identity, on: connection, now: now)
        case (.ready(let identity), .quit):
            quit(for: identity, on: connection, now: now)
        case (.ready, .ping):
            send(.pong, to: connection)
        }
    }

    /// The refusal of anything but `hello` before `welcome`.
    fileprivate func helloFirst(on connection: WebSocketConnection, type: String?) -> ProtocolError {
        if case .authenticating = connection.state {
            return ProtocolError(.helloFirst, "Wait for welcome before sending anything else.", inReplyTo: type)
        }
        return ProtocolError(.helloFirst, "Send hello with your device token first.", inReplyTo: type)
    }

    /// Runs `action` on the connection's game and delivers what it produced, or the refusal.
    fileprivate func withGame(of connection: WebSocketConnection, replyingTo type: String,
                          _ action: (GameSession) -> Result<GameSession.Output, ProtocolError>) {
        guard let sessionID = connection.sessionID, let session = sessions[sessionID] else {
            if let ended = connection.lastEndedGameID {
                refuse(connection, ProtocolError(.gameOver, "Game \(ended) is over; start a new one.", inReplyTo: type))
            } else {
                refuse(connection, ProtocolError(.noGame, "No game is running on this connection; send start first.", inReplyTo: type))
            }
            return
        }
        switch action(session) {
        case .success(let output):
            deliver(output, of: session)
        case .failure(let error):
            refuse(connection, error.replying(to: type))
        }
    }

    // MARK: - hello

    private func hello(token: String, client: String?, on connection: WebSocketConnection) {
        // An address over the limit on failed sign-ins is refused here, before any database job.
        let address = connection.clientAddress
        if let refusal = rateLimits.refusal(.signIn, .address, key: RateLimits.addressKey(address)) {
            return refuse(connection, Self.helloRefusal(refusal))
        }
        connection.state = .authenticating
        let connectionID = connection.id
        let rateLimits = self.rateLimits
        worker.perform({ storage -> (AuthenticatedDevice, QuotaStatus?) in
            let now = storage.now
            let device = try rateLimits.signIn(token: token, address: address, players: storage.players, now: now)
            let quota = try? storage.quota.status(playerID: device.player.id, now: now)
            return (device, quota)
        }, then: { [self] result in
            helloAnswered(result, client: client, connectionID: connectionID)
        })
    }

    private func helloAnswered(_ result: Result<(AuthenticatedDevice, QuotaStatus?), any Error>, client: String?,
                               connectionID: Int) {
        defer { metrics.flush() }
        guard let connection = connections[connectionID] else { return }  // gone meanwhile
        switch result {
        case .success(let (device, quota)):
            let identity = WebSocketConnection.Identity(
                playerID: device.player.id, deviceID: device.deviceID,
                publicID: device.player.publicID, displayName: device.player.displayName)
            connection.state = .ready(identity)
            connectionsByPlayer[identity.playerID, default: []].append(connection.id)
            var resumable: ServerMessage.GameSnapshot?
            if let sessionID = sessionByPlayer[identity.playerID], let session = sessions[sessionID], !session.isOver {
                resumable = session.snapshot
            }
            send(.welcome(.init(playerID: identity.publicID, displayName: identity.displayName, quota: quota,
                                resumable: resumable, limits: limits)), to: connection)
            refreshIdleTimeout(connection)
            logger.info("player signed in on a game connection", metadata: [
                "ws.connection.id": String(connection.id), "player.id": identity.publicID,
                "ws.client": client ?? ""])
        case .failure(let error as RateLimitedError):
            connection.state = .awaitingHello
            refuse(connection, Self.helloRefusal(error))
        case .failure(let error as StoreError) where error.code == .unauthorized:
            connection.state = .awaitingHello
            refuse(connection, ProtocolError(.unauthorized, error.message, inReplyTo: "hello",
                close: .init(code: ProtocolError.Close.unauthorizedCode, reason: "unauthorized: bad or revoked device token")))
        case .failure(let error):
            connection.state = .awaitingHello
            logger.error("hello failed on the storage thread", metadata: ["ws.connection.id": String(connectionID), "error": "\(error)"])
            refuse(connection, ProtocolError(.unavailable, "The server could not check your token just now; connect again shortly.",
                inReplyTo: "hello", close: .init(code: ProtocolError.Close.tryAgainLater, reason: "try again later")))
        }
    }

    /// `too_many_failed_sign_ins` with the seconds to wait, and close 4429 (like HTTP 429).
    static func helloRefusal(_ error: RateLimitedError) -> ProtocolError {
        var refusal = ProtocolError(.tooManyFailedSignIns, error.message, inReplyTo: "hello",
            close: .init(code: ProtocolError.Close.tooManyRequests, reason: "too many failed sign-ins; retry in \(error.retryAfter) s"))
        refusal.retryAfter = error.retryAfter
        return refusal
    }

    // MARK: - start

    private func start(level: SpeedLevel, practice: Bool, for identity: WebSocketConnection.Identity,
                       on connection: WebSocketConnection) {
        if shuttingDown {
            return refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; start again in a moment.", inReplyTo: "start"))
        }
        if let sessionID = sessionByPlayer[identity.playerID], let session = sessions[sessionID], !session.isOver {
            let whereItIs = sessionConnection[sessionID] === connection ? "on this connection" : "waiting for you"
            return refuse(connection, ProtocolError(.gameInProgress,
                "Game \(session.gameID) is \(whereItIs): send resume to go on with it, or quit to end it, before starting another.",
                inReplyTo: "start"))
        }
        if startingPlayers.contains(identity.playerID) {
            return refuse(connection, ProtocolError(.startPending, "A game is already starting for you.", inReplyTo: "start"))
        }
        let gameID = Self.newGameID()
        let seed = Self.newGameSeed()
        if practice {
            // Practice consumes no play and scores nothing: no need to wait for the database.
            let session = startSession(gameID: gameID, playerID: identity.playerID, level: level, seed: seed, practice: true)
            recordPracticeStart(session)
            attach(session, to: connection)
            send(.started(session.snapshot, quota: nil), to: connection)
            return
        }
        startingPlayers.insert(identity.playerID)
        let connectionID = connection.id
        let playerID = identity.playerID
        worker.perform({ storage in
            // The play and the game's running_games row, in one transaction.
            try storage.runningGames.begin(RunningGameStart(
                publicID: gameID, playerID: playerID, level: level, seed: seed, practice: false, startedAt: storage.now))
        }, then: { [self] result in
            startAnswered(result, gameID: gameID, playerID: playerID, level: level, seed: seed, connectionID: connectionID)
        })
    }

    private func startAnswered(_ result: Result<QuotaStatus?, any Error>, gameID: String, playerID: Int64,
                               level: SpeedLevel, seed: UInt64, connectionID: Int) {
        defer { metrics.flush() }
        startingPlayers.remove(playerID)
        let connection = connections[connectionID]
        switch result {
        case .success(let quota):
            if shuttingDown {
                cancelStart(gameID: gameID)
                if let connection { refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; start again in a moment.", inReplyTo: "start")) }
                return
            }
            let session = startSession(gameID: gameID, playerID: playerID, level: level, seed: seed, practice: false)
            guard let connection, connection.closing == nil else {
                // The play is spent and the player gone: the game waits for them, paused,
                // like any game whose connection dropped.
                let now = MonotonicClock.now()
                session.detach(now: now, deadline: now + Int64(limits.disconnectGraceSeconds) * 1_000_000)
                reschedule(session)
                return
            }
            attach(session, to: connection)
            send(.started(session.snapshot, quota: quota), to: connection)
            refreshIdleTimeout(connection)
        case .failure(let error as QuotaExhaustedError):
            if let connection {
                refuse(connection, ProtocolError(.noPlaysLeft, error.storeError.message, inReplyTo: "start"), quota: error.status)
            }
        case .failure(let error):
            logger.error("could not start a game", metadata: ["player.row": String(playerID), "error": "\(error)"])
            if let connection {
                refuse(connection, ProtocolError(.unavailable, "The game could not start just now; nothing was used up. Try again.",
                                                 inReplyTo: "start"))
            }
        }
    }

    /// 16 random hex digits: unguessable enough to name a game in messages and logs.
    static func newGameID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    // MARK: - resume

    /// Resumes the connection's paused game, or takes back the player's game that waits after
    /// a dropped connection (or runs on another of their connections): a full snapshot first.
    private func resume(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection, now: Int64) {
        if let sessionID = connection.sessionID, let session = sessions[sessionID] {
            switch session.resume(now: now) {
            case .success(let output): deliver(output, of: session)
            case .failure(let error): refuse(connection, error.replying(to: "resume"))
            }
            return
        }
        guard let sessionID = sessionByPlayer[identity.playerID], let session = sessions[sessionID], !session.isOver else {
            return refuse(connection, ProtocolError(.noGame, "You have no game to resume; send start for a new one.", inReplyTo: "resume"))
        }
        if shuttingDown {
            return refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; your game is being saved.", inReplyTo: "resume"))
        }
        takeOver(session, on: connection)
        send(.snapshot(session.snapshot), to: connection)
        if case .paused = session.phase, case .success(let output) = session.resume(now: now) {
            deliver(output, of: session)
        } else {
            reschedule(session)
        }
        logger.info("game resumed on a new connection", metadata: [
            "ws.connection.id": String(connection.id), "game.id": session.gameID])
    }
}

extension WebSocketHub {
    /// Ends the connection's game, or the player's game that waits for them (or runs on
    /// another of their connections, which is told it no longer has it): saved as abandoned.
    fileprivate func quit(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection, now: Int64) {
        if connection.sessionID == nil, let sessionID = sessionByPlayer[identity.playerID],
           let session = sessions[sessionID], !session.isOver {
            takeOver(session, on: connection)
        }
        withGame(of: connection, replyingTo: "quit") { session in .success(session.end(.abandoned, now: now)) }
    }

    /// Moves the player's game to `connection`; the connection that had it gets `detached`.
    private func takeOver(_ session: GameSession, on connection: WebSocketConnection) {
        if let previous = sessionConnection[session.id], previous !== connection {
            previous.sessionID = nil
            send(.detached(gameID: session.gameID), to: previous)
            refreshIdleTimeout(previous)
        }
        session.attach()
        attach(session, to: connection)
    }
}

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
        }
    }
}
