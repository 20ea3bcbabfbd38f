import Foundation
import RetroRapidStorage
import RetroRapidSupport

/// Limits on the API that protect the server and its players from one busy or hostile client.
public struct APILimits: Sendable, Equatable {
    /// New players per IP address: creating one is free, so this is what stops a script from
    /// filling the database.
    public var playerCreation = RateLimit(burst: 10, per: .seconds(60 * 10))
    /// Link-code claims per IP address: what stops guessing codes (40 bits, minutes each).
    public var linkCodeClaim = RateLimit(burst: 10, per: .seconds(60 * 10))
    /// Addresses of reverse proxies in front of the server (`--trusted-proxies`, which
    /// `GameServer.Options` copies here). A request or game connection from one of them is
    /// limited by the client address in `X-Forwarded-For` (`ClientAddressResolver`); from
    /// anyone else that header is ignored (a client could write anything in it).
    public var trustedProxies: Set<String> = []

    public init() {}
}

/// What every API route needs: the storage thread, the limits, the events it publishes, a
/// logger. Routes are closures over one of these.
///
/// Threading rule: route handlers run on the service thread and never touch SQLite: they check
/// what needs no database (headers, the body's JSON, rate limits), then hand one job to the
/// `DatabaseWorker`, which signs the device in and does the work in one go on the storage
/// thread; the job's completion answers, back on the service thread.
struct APIServices: Sendable {
    let worker: DatabaseWorker
    let events: PlayerEvents
    let logger: Logger
    let playerCreationLimiter: RateLimiter
    let linkCodeClaimLimiter: RateLimiter
    let clientAddresses: ClientAddressResolver

    init(worker: DatabaseWorker, events: PlayerEvents, logger: Logger, limits: APILimits) {
        self.worker = worker
        self.events = events
        self.logger = logger
        playerCreationLimiter = RateLimiter(limits.playerCreation)
        linkCodeClaimLimiter = RateLimiter(limits.linkCodeClaim)
        clientAddresses = ClientAddressResolver(trustedProxies: limits.trustedProxies)
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
    /// Without a usable token the answer is 401 and nothing runs.
    func runSignedIn(_ request: HTTPRequest, _ responder: HTTPResponder,
                     _ work: @escaping @Sendable (StorageContext, AuthenticatedDevice, Date) throws -> HTTPResponse) {
        let token: String
        do {
            token = try Self.bearerToken(request)
        } catch {
            return responder.respond(error.response)
        }
        run(responder) { storage, now in
            let device = try storage.players.authenticate(token: token, now: now)
            return try work(storage, device, now)
        }
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

    /// Takes a token from `limiter` for the client's IP address, or refuses with 429.
    func checkLimit(_ limiter: RateLimiter, _ request: HTTPRequest, doing what: String) throws(APIError) {
        if let wait = limiter.take(clientAddress(request)) {
            throw APIError.rateLimited("Too many \(what) from this address; try again in \(wait) s.", retryAfter: wait)
        }
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
