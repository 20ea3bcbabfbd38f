import RetroRapidDomain
import RetroRapidRules
import RetroRapidSupport

/// Signs a game connection in: `hello`'s token goes to the storage thread (device sign-in,
/// quota, the failed-sign-in limit shared with the HTTP API) and the answer is `welcome`, with
/// the player's waiting game if they have one, or a refusal that closes. docs/PROTOCOL.md,
/// `hello`.
///
/// Threading rule: owned by the `WebSocketHub` on the libwebsockets service thread; the
/// sign-in runs on the storage thread and its completion comes back through the mailbox.
final class ConnectionSignIn: @unchecked Sendable {
    // @unchecked: the lets are Sendable or used only on the service thread, where the
    // worker's completions run.

    let limits: WebSocketLimits
    let connections: ConnectionRegistry
    let matchHost: MatchHost
    let worker: DatabaseWorker
    let rateLimits: RateLimits
    let metrics: WebSocketMetrics
    let logger: Logger
    /// This node's own game URL (`--game-url`), told in `welcome`.
    let gameURL: String?

    init(limits: WebSocketLimits, connections: ConnectionRegistry, matchHost: MatchHost, worker: DatabaseWorker,
         rateLimits: RateLimits, metrics: WebSocketMetrics, logger: Logger, gameURL: String? = nil) {
        self.gameURL = gameURL
        self.limits = limits
        self.connections = connections
        self.matchHost = matchHost
        self.worker = worker
        self.rateLimits = rateLimits
        self.metrics = metrics
        self.logger = logger
    }

    func hello(token: String, client: String?, on connection: WebSocketConnection) {
        // An address over the limit on failed sign-ins is refused here, before any database job.
        let address = connection.clientAddress
        if let refusal = rateLimits.refusal(.signIn, .address, key: RateLimits.addressKey(address)) {
            return connections.refuse(connection, Self.helloRefusal(refusal))
        }
        connection.state = .authenticating
        let connectionID = connection.id
        let rateLimits = self.rateLimits
        let cluster = matchHost.role.isCluster
        // The serial lane (no key), with the API's device revocations: a sign-in that ran before
        // a revocation is answered before its event, which then closes the connection.
        worker.perform({ storage -> (AuthenticatedDevice, QuotaStatus?, RunningGameRecord?) in
            let now = storage.now
            let device = try rateLimits.signIn(token: token, address: address, players: storage.players, in: storage.rateLimits, now: now)
            let quota = try? storage.quota.status(playerID: device.player.id, now: now)
            // In a cluster the player's waiting game may be on another node: the database knows.
            let elsewhere = cluster ? try? storage.runningGames.running(playerID: device.player.id).first : nil
            return (device, quota, elsewhere)
        }, then: { [self] result in
            helloAnswered(result, client: client, connectionID: connectionID)
        })
    }

    private func helloAnswered(_ result: Result<(AuthenticatedDevice, QuotaStatus?, RunningGameRecord?), any Error>,
                               client: String?, connectionID: Int) {
        defer { metrics.flush() }
        guard let connection = connections[connectionID] else { return }  // gone meanwhile
        switch result {
        case .success(let (device, quota, elsewhere)):
            let identity = WebSocketConnection.Identity(
                playerID: device.player.id, deviceID: device.deviceID,
                publicID: device.player.publicID, displayName: device.player.displayName)
            connections.signedIn(connection, as: identity)
            let resumable = matchHost.game(of: identity.playerID)?.snapshot ?? elsewhere.flatMap(Self.waitingSnapshot)
            connections.send(.welcome(.init(playerID: identity.publicID, displayName: identity.displayName, quota: quota,
                                            resumable: resumable, limits: limits, node: matchHost.role.nodeID,
                                            gameURL: gameURL)), to: connection)
            matchHost.refreshIdleTimeout(connection)
            logger.info("player signed in on a game connection", metadata: [
                "ws.connection.id": String(connection.id), "player.id": identity.publicID,
                "ws.client": client ?? ""])
        case .failure(let error as RateLimitedError):
            connection.state = .awaitingHello
            connections.refuse(connection, Self.helloRefusal(error))
        case .failure(let error as StoreError) where error.code == .unauthorized:
            connection.state = .awaitingHello
            connections.refuse(connection, ProtocolError(.unauthorized, error.message, inReplyTo: "hello",
                close: .init(code: ProtocolError.Close.unauthorizedCode, reason: "unauthorized: bad or revoked device token")))
        case .failure(let error):
            connection.state = .awaitingHello
            logger.error("hello failed on the storage thread", metadata: ["ws.connection.id": String(connectionID), "error": "\(error)"])
            connections.refuse(connection, ProtocolError(.unavailable, "The server could not check your token just now; connect again shortly.",
                inReplyTo: "hello", close: .init(code: ProtocolError.Close.tryAgainLater, reason: "try again later")))
        }
    }

    /// The picture of a game running on another node (or left by a dead one) as its last
    /// checkpoint has it, paused: what `resume` here brings back (`GameHandoff`).
    static func waitingSnapshot(_ record: RunningGameRecord) -> ServerMessage.GameSnapshot? {
        guard let log = try? InputLog(encoded: record.inputLog),
              let game = try? Game(resuming: log, seed: record.seed, level: record.level, rulesVersion: record.rulesVersion),
              !game.state.isOver
        else { return nil }
        return GameSession(id: 0, gameID: record.publicID, playerID: record.playerID, resuming: game, practice: record.practice,
                           graceLimitMilliseconds: 0, startedAt: record.startedAt, playedMilliseconds: 0, now: 0, deadline: 0).snapshot
    }

    /// `too_many_failed_sign_ins` with the seconds to wait, and close 4429 (like HTTP 429).
    static func helloRefusal(_ error: RateLimitedError) -> ProtocolError {
        var refusal = ProtocolError(.tooManyFailedSignIns, error.message, inReplyTo: "hello",
            close: .init(code: ProtocolError.Close.tooManyRequests, reason: "too many failed sign-ins; retry in \(error.retryAfter) s"))
        refusal.retryAfter = error.retryAfter
        return refusal
    }
}
