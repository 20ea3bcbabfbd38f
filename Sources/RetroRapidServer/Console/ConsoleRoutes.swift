import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// The operator console's JSON API, on the console's own listener only (docs/OPERATIONS.md,
/// "The console"): signing in and out, the overview, finding and looking after players, the
/// audit log (codes: `ConsoleCodeRoutes`; orders: `ConsoleOrderRoutes`).
/// Every change goes through `OperatorActions`, the code the CLI runs, audited as
/// `console:NAME`; every route but sign-in goes through `ConsoleGate`.
enum ConsoleRoutes {
    struct Services: Sendable {
        let gate: ConsoleGate
        let rateLimits: RateLimits
        let clientAddresses: ClientAddressResolver
        let events: PlayerEvents
        /// Where `events` are published: the game side's service thread.
        let gameMailbox: ServiceMailbox
        /// Whether the console's cookie needs `Secure` (the console is reached over HTTPS).
        let secureCookies: Bool
        let logger: Logger
        /// The server's own counters, read on the game's service thread.
        let metrics: Metrics
        /// This node's name in a cluster (the host name on a single node).
        let nodeID: String
        let summaries = ConsoleSummaryCache()
        /// This node's counters, a sample a minute, for the overview's charts.
        let history: ConsoleHistory
        /// The players' site (`--public-base-url`), which the pages link games to; nil when unset.
        let site: String?
        /// The game side's own counts (race rooms, watchers), asked on its service thread.
        let liveFigures: @Sendable () -> [String: Int]
    }

    static func add(to router: inout HTTPRouter, _ services: Services) {
        router.add(.post, "/api/session") { request, responder in signIn(request, responder, services) }
        router.add(.get, "/api/session") { request, responder in
            do {
                let (_, session) = try services.gate.session(request, .view)
                responder.respond(try APIJSON.response(SessionJSON(session, site: services.site)))
            } catch {
                responder.respond(APIError(error).response)
            }
        }
        router.add(.delete, "/api/session") { request, responder in signOut(request, responder, services) }
        router.add(.get, "/api/overview") { request, responder in overview(request, responder, services) }
        router.add(.get, "/api/players") { request, responder in
            let query = request.query("query") ?? ""
            services.gate.run(request, responder, .view) { storage, _, _ in
                try APIJSON.response(["players": try storage.players.search(query, limit: 20).map(PlayerJSON.init)])
            }
        }
        router.add(.get, "/api/players/{id}") { request, responder in
            let publicID = request.pathParameters["id"] ?? ""
            services.gate.run(request, responder, .view) { storage, _, now in
                try APIJSON.response(try PlayerDetailJSON(storage.players.player(publicID: publicID), storage: storage, now: now))
            }
        }
        router.add(.post, "/api/players/{id}/unlimited") { request, responder in
            changePlayer(request, responder, services, body: ReasonBody.self) { actions, player, body, now in
                try actions.grantUnlimited(player, reason: body.reason, now: now).changed
            }
        }
        router.add(.post, "/api/players/{id}/name") { request, responder in
            changePlayer(request, responder, services, body: NameBody.self) { actions, player, body, now in
                try actions.rename(player, to: body.displayName, now: now).changed
            }
        }
        router.add(.post, "/api/players/{id}/devices/{device}/revoke") { request, responder in
            let publicID = request.pathParameters["id"] ?? ""
            let deviceID: Int64
            do { deviceID = try APIServices.integerParameter(request, "device") } catch {
                return responder.respond(APIError(error).response)
            }
            services.gate.perform(request, responder, .change, { storage, signedIn, now in
                let player = try storage.players.player(publicID: publicID)
                let change = try actions(storage, signedIn).revokeDevice(player, deviceID: deviceID, now: now)
                let answer = try APIJSON.response(ChangeJSON(changed: change.changed,
                                                             player: try PlayerDetailJSON(player, storage: storage, now: now)))
                return (answer, player.id)
            }, then: { answer, playerID in
                responder.respond(answer)
                // Its open game connections close on whichever node holds them: this node's
                // game side hears it, and the cluster relay tells the others.
                services.gameMailbox.post { services.events.publishDeviceRevoked(playerID: playerID, deviceID: deviceID) }
            })
        }
        ConsoleCodeRoutes.add(to: &router, services.gate)
        ConsoleOrderRoutes.add(to: &router, services.gate)
        router.add(.get, "/api/audit") { request, responder in
            let limit: Int
            let before: Int64?
            do {
                limit = try APIServices.integerQuery(request, "limit", in: 1...500, default: 100)
                before = try request.query("before").map { text throws(APIError) in
                    guard let id = Int64(text), id > 0 else {
                        throw APIError.invalid("'before' must be an entry's id, a positive whole number.", field: "before")
                    }
                    return id
                }
            } catch {
                return responder.respond(APIError(error).response)
            }
            services.gate.run(request, responder, .view) { storage, _, _ in
                try APIJSON.response(["entries": try storage.auditLog.entries(limit: limit, before: before).map(AuditJSON.init)])
            }
        }
    }

    /// The node's live figures (from its counters, on the game's service thread, where a scrape
    /// reads them) and today's counts (from the database, at most a minute old).
    static func overview(_ request: HTTPRequest, _ responder: HTTPResponder, _ services: Services) {
        services.gate.perform(request, responder, .view, { storage, _, now in
            (try services.summaries.summary(storage, now: now), try storage.cluster.nodes())
        }, then: { summary, nodes in
            services.gameMailbox.post {
                let totals = services.metrics.totals(OverviewJSON.Node.metricNames)
                let node = OverviewJSON.Node(id: services.nodeID, totals: totals, live: services.liveFigures())
                let overview = OverviewJSON(node: node, today: OverviewJSON.Today(summary),
                                            cluster: nodes.map(OverviewJSON.ClusterNodeJSON.init),
                                            lastHour: services.history.lastHour, lastDay: services.history.lastDay)
                responder.respond((try? APIJSON.response(overview))
                                  ?? APIError(status: 500, code: "internal", message: "The overview could not be written.").response)
            }
        })
    }

    /// A change to the player the path names, with a JSON body: answered with whether it
    /// changed anything and the player as stored after it.
    static func changePlayer<Body: APIRequestBody>(
        _ request: HTTPRequest, _ responder: HTTPResponder, _ services: Services, body: Body.Type,
        _ change: @escaping @Sendable (OperatorActions, Player, Body, Date) throws -> Bool
    ) {
        let publicID = request.pathParameters["id"] ?? ""
        let decoded: Body
        do { decoded = try APIJSON.decode(Body.self, from: request, required: true) } catch {
            return responder.respond(APIError(error).response)
        }
        services.gate.run(request, responder, .change) { storage, signedIn, now in
            let player = try storage.players.player(publicID: publicID)
            let changed = try change(actions(storage, signedIn), player, decoded, now)
            let after = try storage.players.player(id: player.id)
            return try APIJSON.response(ChangeJSON(changed: changed, player: try PlayerDetailJSON(after, storage: storage, now: now)))
        }
    }

    static func actions(_ storage: StorageContext, _ signedIn: ConsoleGate.Operator) -> OperatorActions {
        OperatorActions(actor: signedIn.actor, connection: storage.connection, repositories: storage.repositories)
    }

    // MARK: - Signing in and out

    struct SignInBody: APIRequestBody {
        static let fields = ["name", "password"]
        let name: String
        let password: String
    }

    /// The stored hash a sign-in with an unknown name is checked against, so it costs what a
    /// wrong password does and the time told nobody whether the name exists.
    /// Made on first use, off the service and storage threads.
    static let standInHash = OperatorPassword.hash(OperatorPassword.generate())

    static func signIn(_ request: HTTPRequest, _ responder: HTTPResponder, _ services: Services) {
        let body: SignInBody
        do { body = try APIJSON.decode(SignInBody.self, from: request, required: true) } catch {
            return responder.respond(error.response)
        }
        let address = services.clientAddresses.clientAddress(peer: request.remoteAddress,
                                                              forwardedFor: request[header: "x-forwarded-for"])
        let addressKey = RateLimits.addressKey(address)
        if let refusal = services.rateLimits.refusal(.operatorSignIn, .address, key: addressKey) {
            return responder.respond(APIError(refusal).response)
        }
        let rateLimits = services.rateLimits
        services.gate.worker.perform({ storage -> (account: OperatorAccount, hash: String)? in
            try rateLimits.takeOperatorSignIn(addressKey: addressKey, in: storage.rateLimits, now: storage.now)
            guard let name = try? OperatorAccount.validatedName(body.name),
                  let stored = try? storage.operators.account(named: name) else { return nil }
            return (stored.account, stored.passwordHash)
        }, then: { result in
            let found: (account: OperatorAccount, hash: String)?
            switch result {
            case .success(let value): found = value
            case .failure(let error): return responder.respond(APIError(error, logger: services.logger).response)
            }
            // 100,000 rounds of a hash: neither on the service thread nor on a storage thread.
            DispatchQueue.global().async {
                let matches = OperatorPassword.matches(body.password, stored: found?.hash ?? standInHash)
                guard matches, let account = found?.account, !account.isDisabled else {
                    services.logger.info("operator sign-in refused", metadata: ["client.address": address])
                    return responder.respond(APIError(status: 401, code: "unauthorized",
                        message: "That name and password do not sign in. Check both, or ask an admin to reset the password.").response)
                }
                let (token, session) = services.gate.sessions.open(operatorName: account.name, role: account.role)
                services.logger.info("operator signed in", metadata: ["operator": account.name, "client.address": address])
                let cookie = "\(ConsoleGate.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
                    + (services.secureCookies || request[header: "x-forwarded-proto"] == "https" ? "; Secure" : "")
                responder.respond((try? APIJSON.response(SessionJSON(session, site: services.site), headers: [HTTPHeader("set-cookie", cookie)]))
                                  ?? APIError(status: 500, code: "internal", message: "The session could not be written.").response)
            }
        })
    }

    static func signOut(_ request: HTTPRequest, _ responder: HTTPResponder, _ services: Services) {
        do {
            let (token, session) = try services.gate.session(request, .view)
            // Signing out needs the CSRF token too: another site must not end a session.
            guard let sent = request[header: "x-csrf-token"],
                  HMACSHA256.constantTimeEquals(Array(sent.utf8), Array(session.csrfToken.utf8)) else {
                throw APIError(status: 403, code: "csrf", message: "Signing out needs the session's CSRF token: reload the page and try again.")
            }
            services.gate.sessions.end(token)
            services.logger.info("operator signed out", metadata: ["operator": session.operatorName])
            responder.respond(HTTPResponse(status: 204, contentType: "application/json", headers: [
                HTTPHeader("cache-control", "no-store"),
                HTTPHeader("set-cookie", "\(ConsoleGate.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
            ], body: []))
        } catch {
            responder.respond(APIError(error).response)
        }
    }

    // MARK: - What the pages read

    struct SessionJSON: Encodable {
        struct Who: Encodable { let name: String; let role: String }
        let `operator`: Who
        let csrfToken: String
        /// Where players play (`--public-base-url`), for links to watch or replay a game.
        let site: String?

        init(_ session: ConsoleSessions.Session, site: String?) {
            self.operator = Who(name: session.operatorName, role: session.role.rawValue)
            csrfToken = session.csrfToken
            self.site = site
        }
    }

    struct OverviewJSON: Encodable {
        struct Node: Encodable {
            static let metricNames = ["retrorapid_games_running", "retrorapid_websocket_connections", "retrorapid_connections_open",
                                      "retrorapid_games_ended_total", "retrorapid_database_queue_depth"]
            let id: String
            let gamesRunning: Int
            let gameConnections: Int
            let connectionsOpen: Int
            let gamesEndedSinceStart: Int
            let storageQueue: Int
            let raceRooms: Int
            let watchers: Int

            init(id: String, totals: [String: Double], live: [String: Int]) {
                self.id = id
                func count(_ name: String) -> Int {
                    let value = totals[name] ?? 0
                    return value.isFinite && value >= 0 && value < 1e15 ? Int(value) : 0
                }
                gamesRunning = count("retrorapid_games_running")
                gameConnections = count("retrorapid_websocket_connections")
                connectionsOpen = count("retrorapid_connections_open")
                gamesEndedSinceStart = count("retrorapid_games_ended_total")
                storageQueue = count("retrorapid_database_queue_depth")
                raceRooms = live["raceRooms"] ?? 0
                watchers = live["watchers"] ?? 0
            }
        }
        struct Today: Encodable {
            let day: String
            let newPlayers: Int
            let gamesFinished: Int
            let playsUsed: Int
            let ordersPaid: Int

            init(_ summary: ServiceSummary) {
                day = summary.day.text
                newPlayers = summary.newPlayers
                gamesFinished = summary.gamesFinished
                playsUsed = summary.playsUsed
                ordersPaid = summary.ordersPaid
            }
        }
        struct ClusterNodeJSON: Encodable {
            let id: String
            let startedAt: Date
            let lastHeartbeat: Date
            let gamesHeld: Int

            init(_ node: ClusterNode) {
                id = node.nodeID
                startedAt = node.startedAt
                lastHeartbeat = node.seenAt
                gamesHeld = node.gamesHeld
            }
        }
        let node: Node
        let today: Today
        /// Every node registered on the database: on PostgreSQL each node, even one alone;
        /// empty on SQLite, where a node always runs alone.
        let cluster: [ClusterNodeJSON]
        let lastHour: [ConsoleHistory.Minute]
        let lastDay: [ConsoleHistory.Hour]
    }

    struct PlayerJSON: Encodable {
        let id: String
        let displayName: String
        let createdAt: Date

        init(_ player: Player) {
            id = player.publicID
            displayName = player.displayName
            createdAt = player.createdAt
        }
    }

    struct PlayerDetailJSON: Encodable {
        struct DeviceJSON: Encodable {
            let id: Int64
            let label: String
            let createdAt: Date
            let lastSeenAt: Date?
            let revokedAt: Date?
        }
        struct GameJSON: Encodable {
            let id: String
            let level: String
            let score: Int
            let endedAt: Date
            let practice: Bool
        }
        struct OrderJSON: Encodable {
            let id: String
            let status: String
            let amount: String
            let createdAt: Date
            let paidAt: Date?
        }
        struct UnlimitedJSON: Encodable {
            let source: String
            let reference: String
            let grantedAt: Date
        }
        let player: PlayerJSON
        let devices: [DeviceJSON]
        let freePlaysLeftToday: Int?
        let unlimited: UnlimitedJSON?
        let runningGames: [String]
        let recentGames: [GameJSON]
        let orders: [OrderJSON]

        init(_ player: Player, storage: StorageContext, now: Date) throws {
            self.player = PlayerJSON(player)
            devices = try storage.players.devices(playerID: player.id).map {
                DeviceJSON(id: $0.id, label: $0.label, createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt, revokedAt: $0.revokedAt)
            }
            let quota = try storage.quota.status(playerID: player.id, now: now)
            freePlaysLeftToday = quota.unlimited ? nil : quota.playsLeft
            unlimited = try storage.entitlements.unlimited(playerID: player.id).map {
                UnlimitedJSON(source: $0.source.rawValue, reference: $0.reference, grantedAt: $0.grantedAt)
            }
            runningGames = try storage.runningGames.running(playerID: player.id).map(\.publicID)
            recentGames = try storage.games.games(playerID: player.id, limit: 10).map {
                GameJSON(id: $0.displayID, level: $0.level.rawValue, score: $0.score, endedAt: $0.endedAt, practice: $0.practice)
            }
            orders = try storage.orders.orders(playerID: player.id).map {
                OrderJSON(id: $0.publicID, status: $0.status.rawValue, amount: $0.amount.description, createdAt: $0.createdAt, paidAt: $0.paidAt)
            }
        }
    }

    struct ChangeJSON: Encodable {
        /// False when it was already so (nothing written, no audit entry).
        let changed: Bool
        let player: PlayerDetailJSON
    }

    struct ReasonBody: APIRequestBody {
        static let fields = ["reason"]
        let reason: String
    }

    struct NameBody: APIRequestBody {
        static let fields = ["displayName"]
        let displayName: String
    }

    struct AuditJSON: Encodable {
        let id: Int64
        let at: Date
        let actor: String
        let action: String
        let subject: String
        let before: String?
        let after: String?

        init(_ entry: AuditEntry) {
            id = entry.id
            at = entry.at
            actor = entry.actor
            action = entry.action
            subject = entry.subject
            before = entry.before
            after = entry.after
        }
    }
}
