import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// Limits on the API that protect the server and its players from one busy or hostile client
/// (the settings `--new-players-per-address` … `--checkout-sessions-per-player`, and
/// `--trusted-proxies`; `RateLimits` applies them). A view over the server's configuration:
/// each limit reads (and, in tests, writes) its setting there, so nothing is copied by hand and
/// the defaults and validation stay in `ServerConfiguration`.
public struct APILimits: Sendable, Equatable {
    /// The configuration the limits are read from.
    public var configuration: ServerConfiguration

    /// The limits `configuration` sets (its defaults when none is given).
    public init(_ configuration: ServerConfiguration = ServerConfiguration()) {
        self.configuration = configuration
    }

    /// New players per client address, every creation counted: creating one is free, so this
    /// is what stops a script from filling the database.
    public var playerCreation: RateLimit {
        get { configuration.newPlayersPerAddress }
        set { configuration.newPlayersPerAddress = newValue }
    }
    /// New players on the whole server, every address together: bounds a script spread over
    /// many addresses, so the per-address limit can stay generous for shared addresses.
    public var serverPlayerCreation: RateLimit {
        get { configuration.newPlayersPerServer }
        set { configuration.newPlayersPerServer = newValue }
    }
    /// Failed link-code claims per client address: what stops guessing codes (40 bits,
    /// minutes each). A claim has no player to count for.
    public var linkCodeClaimFailures: RateLimit {
        get { configuration.failedLinkClaimsPerAddress }
        set { configuration.failedLinkClaimsPerAddress = newValue }
    }
    /// Failed code redemptions per player (tight) and per client address (generous).
    public var codeFailuresPerPlayer: RateLimit {
        get { configuration.failedCodesPerPlayer }
        set { configuration.failedCodesPerPlayer = newValue }
    }
    public var codeFailuresPerAddress: RateLimit {
        get { configuration.failedCodesPerAddress }
        set { configuration.failedCodesPerAddress = newValue }
    }
    /// Device tokens that sign nobody in, per client address, HTTP and `hello` together.
    public var signInFailures: RateLimit {
        get { configuration.failedSignInsPerAddress }
        set { configuration.failedSignInsPerAddress = newValue }
    }
    /// Checkout sessions opened at the payment provider per player, every one counted: each
    /// costs a call to the provider (buy, cancel, buy again…).
    public var checkoutSessions: RateLimit {
        get { configuration.checkoutSessionsPerPlayer }
        set { configuration.checkoutSessionsPerPlayer = newValue }
    }
    /// Operator console sign-ins per client address, every attempt counted.
    public var operatorSignIns: RateLimit {
        get { configuration.operatorSignInsPerAddress }
        set { configuration.operatorSignInsPerAddress = newValue }
    }
    /// Addresses of reverse proxies in front of the server (`--trusted-proxies`). A request or
    /// game connection from one of them is limited by the client address in
    /// `X-Forwarded-For` (`ClientAddressResolver`); from anyone else that header is ignored
    /// (a client could write anything in it).
    public var trustedProxies: Set<String> {
        get { Set(configuration.trustedProxies) }
        set { configuration.trustedProxies = newValue.sorted() }
    }
}

/// What every API route needs: the storage thread, the limits, the events it publishes, a
/// logger. Routes are closures over one of these.
///
/// Threading rule: route handlers run on the service thread and never touch SQLite: they check
/// what needs no database (headers, the body's JSON, rate limits), then hand one job to the
/// `DatabaseWorker`, which signs the device in and does the work in one go on the storage
/// thread; the job's completion answers, back on the service thread.
///
/// Ordering rule: API jobs have no key (the player is known only once the token is checked on
/// the storage thread), so they all run on the worker's serial lane, in the order they came,
/// as with one storage thread. That keeps each player's settings writes, and the events they
/// publish, in commit order (`SettingsRoutes.write`), and a device's revocation in order with
/// its sign-ins (`ConnectionSignIn`). Beside them, on other lanes, run only games' jobs, whose
/// rules (a play taken once, a score and its leaderboard rows together) the store's
/// transactions keep.
struct APIServices: Sendable {
    let worker: DatabaseWorker
    let events: PlayerEvents
    let logger: Logger
    let rateLimits: RateLimits
    let clientAddresses: ClientAddressResolver
    /// The payment provider's hosted checkout; nil when this server sells nothing.
    let checkout: CheckoutClient?
    /// The checkout sessions being opened now, one per player.
    let checkoutOpenings = CheckoutOpenings()

    init(worker: DatabaseWorker, events: PlayerEvents, logger: Logger, rateLimits: RateLimits,
         clientAddresses: ClientAddressResolver, checkout: CheckoutClient? = nil) {
        self.checkout = checkout
        self.worker = worker
        self.events = events
        self.logger = logger
        self.rateLimits = rateLimits
        self.clientAddresses = clientAddresses
    }

    /// Runs `work` on the storage thread (with the time it should act at) and answers with what
    /// it returns, or with the error it throws.
    func run(_ responder: HTTPResponder,
             _ work: @escaping @Sendable (StorageContext, Date) throws -> HTTPResponse) {
        let logger = self.logger
        worker.perform({ storage in try work(storage, storage.now) }, then: { result in
            responder.respond(Self.response(result, logger: logger))
        })
    }

    /// Like `run`, signed in: the bearer token is checked for its shape here and against the
    /// database on the storage thread, in the same job as `work`, which gets the device.
    /// Without a usable token the answer is 401 and nothing runs. From an address that sent
    /// too many tokens that signed nobody in, the answer is 429 and no token is looked up
    /// (`RateLimits.signIn`): asked here first, so such a client costs no database job.
    func runSignedIn(_ request: HTTPRequest, _ responder: HTTPResponder,
                     _ work: @escaping @Sendable (StorageContext, AuthenticatedDevice, Date) throws -> HTTPResponse) {
        runSignedIn(request, responder, publishing: { (_: Never) in }) { storage, device, now in
            (try work(storage, device, now), nil)
        }
    }

    /// Like `runSignedIn`, for a change other parts of the server must hear of: `work` returns
    /// the answer and the event, and `publish` gets the event on the service thread right
    /// after the answer is handed on (a device signed out closes its game connections).
    func runSignedIn<Event: Sendable>(
        _ request: HTTPRequest, _ responder: HTTPResponder, publishing publish: @escaping @Sendable (Event) -> Void,
        _ work: @escaping @Sendable (StorageContext, AuthenticatedDevice, Date) throws -> (HTTPResponse, Event?)
    ) {
        performSignedIn(request, responder, work, then: { response, event in
            responder.respond(response)
            if let event { publish(event) }
        })
    }

    /// Like `runSignedIn`, for a request that goes on after the storage thread (a call to the
    /// payment provider): `then` gets what `work` returned, on the service thread, and must
    /// answer through `responder` itself. A refusal (401, 429, what `work` throws) is answered here.
    func performSignedIn<T: Sendable>(
        _ request: HTTPRequest, _ responder: HTTPResponder,
        _ work: @escaping @Sendable (StorageContext, AuthenticatedDevice, Date) throws -> T,
        then: @escaping @Sendable (T) -> Void
    ) {
        let token: String
        let address = clientAddress(request)
        do {
            token = try Self.bearerToken(request)
            if let refusal = rateLimits.refusal(.signIn, .address, key: RateLimits.addressKey(address)) { throw refusal }
        } catch {
            return responder.respond(APIError(error).response)
        }
        let rateLimits = self.rateLimits
        let logger = self.logger
        worker.perform({ storage -> T in
            let now = storage.now
            let device = try rateLimits.signIn(token: token, address: address, players: storage.players,
                                               in: storage.rateLimits, now: now)
            return try work(storage, device, now)
        }, then: { result in
            switch result {
            case .success(let value): then(value)
            case .failure(let error): responder.respond(APIError(error, logger: logger).response)
            }
        })
    }

    /// Like `runSignedIn`, with a JSON body: the token's presence is checked first (so a request
    /// without one is always 401), then the body (400/415), then both go to the storage thread.
    func runSignedIn<Body: APIRequestBody>(
        _ request: HTTPRequest, _ responder: HTTPResponder, body: Body.Type, required: Bool = true,
        _ work: @escaping @Sendable (StorageContext, AuthenticatedDevice, Date, Body) throws -> HTTPResponse
    ) {
        let decoded: Body
        do {
            _ = try Self.bearerToken(request)
            decoded = try APIJSON.decode(Body.self, from: request, required: required)
        } catch {
            return responder.respond(error.response)
        }
        runSignedIn(request, responder) { storage, device, now in try work(storage, device, now, decoded) }
    }

    /// The response for a job's result: its own on success, the mapped error otherwise.
    static func response(_ result: Result<HTTPResponse, any Error>, logger: Logger) -> HTTPResponse {
        switch result {
        case .success(let response): return response
        case .failure(let error): return APIError(error, logger: logger).response
        }
    }

    /// `Authorization: Bearer <device token>`.
    static func bearerToken(_ request: HTTPRequest) throws(APIError) -> String {
        guard let header = request[header: "authorization"]?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            throw APIError.unauthorized("This request needs the device token: send 'Authorization: Bearer <token>'.")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError.unauthorized("The Authorization header must be 'Bearer <token>'.")
        }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// The key the client's address is counted under by the per-address limits.
    func addressKey(_ request: HTTPRequest) -> String {
        RateLimits.addressKey(clientAddress(request))
    }

    /// The peer's address, or behind a trusted proxy the client it forwarded for (the rightmost
    /// address in X-Forwarded-For that is not a trusted proxy).
    func clientAddress(_ request: HTTPRequest) -> String {
        clientAddresses.clientAddress(peer: request.remoteAddress, forwardedFor: request[header: "x-forwarded-for"])
    }

    /// A path parameter that must be a positive whole number (a device id).
    static func integerParameter(_ request: HTTPRequest, _ name: String) throws(APIError) -> Int64 {
        guard let text = request.pathParameters[name], let value = Int64(text), value > 0 else {
            throw APIError.notFound("There is nothing at \(request.path): the \(name) must be a positive whole number.", field: name)
        }
        return value
    }

    /// A query parameter that must be a whole number in `range`, or `default` when absent.
    static func integerQuery(_ request: HTTPRequest, _ name: String, in range: ClosedRange<Int>, default value: Int) throws(APIError) -> Int {
        guard let text = request.query(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw APIError.invalid("'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound).", field: name)
        }
        return number
    }
}
