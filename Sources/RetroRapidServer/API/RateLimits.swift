import Foundation
import RetroRapidDomain
import RetroRapidSupport
import Synchronization

/// Every limit on creating players and on guessing a secret (a promo code, a link code, a
/// device token), shared by the HTTP API and the game side (a token guessed in `hello` costs
/// what one guessed over HTTP does), and the counter of what they refused:
/// `retrorapid_rate_limited_total{action,scope}`.
///
/// Creating a player costs a slot each time. For the rest only a failed guess costs one, so a
/// player who types one valid code is never held up; a refusal itself costs nothing, so a
/// client that waits its Retry-After gets in.
///
/// The counts that decide live in the database (`RateLimitRepository`), so every node on one
/// database and every restart count against one budget: the check and the count run on the
/// storage thread, in the job that makes the attempt, in one transaction under the key's lock
/// (docs/STORAGE.md, "Rate limits"), so guesses sent at once to any number of nodes still get
/// at most the limit's worth of answers. A guess (a code, a link code) is counted before it is
/// tried and uncounted when it works; a token, which nearly always signs someone in, is
/// checked with a read first and counted only when it fails. Each process also keeps the
/// failures it saw, and the refusals the database gave it, in memory (`RateLimiter`): the
/// routes ask that on the service thread first, so a client already over a limit costs no
/// database job at all. The checkout-sessions limit lives in memory only.
///
/// Threading: any thread (each `RateLimiter` has its lock; the counter its own; the prune
/// time its own). The methods that take a `RateLimitRepository` run on a storage thread.
final class RateLimits: Sendable {
    /// The thing limited: the `action` label.
    enum Action: String, Sendable, CaseIterable {
        case playerCreate = "player_create"
        case linkCodeClaim = "link_code_claim"
        case codeRedeem = "code_redeem"
        case signIn = "sign_in"
        case checkoutOpen = "checkout_open"
        /// An operator console sign-in, every attempt counted.
        case operatorSignIn = "operator_sign_in"
    }

    /// Who it is counted for: the `scope` label.
    enum Scope: String, Sendable {
        case address, player
        /// The whole server, every address together (one key, `RateLimits.serverKey`).
        case server
    }

    let limits: APILimits
    private let playerCreation: RateLimiter
    private let serverPlayerCreation: RateLimiter
    private let linkCodeClaimFailures: RateLimiter
    private let codeFailuresPerPlayer: RateLimiter
    private let codeFailuresPerAddress: RateLimiter
    private let signInFailures: RateLimiter
    private let checkoutSessions: RateLimiter
    private let operatorSignIns: RateLimiter
    private let refusals: Counter
    /// What the limiter's clock reads; tests move it.
    let clock: @Sendable () -> ContinuousClock.Instant
    /// When this process next deletes old rows of the stored counts (`pruneIfDue`).
    private let nextPrune = Mutex(Date.distantPast)
    /// The longest window of the limits counted in the database: older rows count for none.
    private let longestStoredWindow: TimeInterval

    init(_ limits: APILimits, metrics: Metrics, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.limits = limits
        self.clock = clock
        playerCreation = RateLimiter(limits.playerCreation)
        serverPlayerCreation = RateLimiter(limits.serverPlayerCreation)
        linkCodeClaimFailures = RateLimiter(limits.linkCodeClaimFailures)
        codeFailuresPerPlayer = RateLimiter(limits.codeFailuresPerPlayer)
        codeFailuresPerAddress = RateLimiter(limits.codeFailuresPerAddress)
        signInFailures = RateLimiter(limits.signInFailures)
        checkoutSessions = RateLimiter(limits.checkoutSessions)
        operatorSignIns = RateLimiter(limits.operatorSignIns)
        longestStoredWindow = [limits.playerCreation, limits.serverPlayerCreation, limits.linkCodeClaimFailures,
                               limits.codeFailuresPerPlayer, limits.codeFailuresPerAddress, limits.signInFailures,
                               limits.operatorSignIns]
            .map { $0.window.seconds }.max() ?? 0
        refusals = metrics.counter("retrorapid_rate_limited_total",
                                   help: "Requests and hellos refused by a rate limit, by what was limited and for whom "
                                       + "(address: the client address; player: the signed-in player; server: every address together).",
                                   labelNames: ["action", "scope"])
        // Every series from the start, so a dashboard shows 0 rather than nothing.
        for (action, scope) in Self.pairs { refusals.increment(by: 0, action.rawValue, scope.rawValue) }
    }

    /// The limits that exist: each action per address, code redemption per player too (the
    /// others have no player: a claim or a failed sign-in has no token that names one), and
    /// player creation for the whole server too.
    static let pairs: [(Action, Scope)] = [
        (.playerCreate, .address), (.playerCreate, .server), (.linkCodeClaim, .address), (.codeRedeem, .player), (.codeRedeem, .address),
        (.signIn, .address), (.checkoutOpen, .player), (.operatorSignIn, .address),
    ]

    private func limiter(_ action: Action, _ scope: Scope) -> RateLimiter {
        switch (action, scope) {
        case (.playerCreate, .server): serverPlayerCreation
        case (.playerCreate, _): playerCreation
        case (.linkCodeClaim, _): linkCodeClaimFailures
        case (.codeRedeem, .player): codeFailuresPerPlayer
        case (.codeRedeem, _): codeFailuresPerAddress
        case (.signIn, _): signInFailures
        case (.checkoutOpen, _): checkoutSessions
        case (.operatorSignIn, _): operatorSignIns
        }
    }

    /// The key a client address is counted under (`IPAddress.limitKey`): an IPv6 client by
    /// its /64, as the connection caps count it too.
    static func addressKey(_ address: String) -> String {
        IPAddress.limitKey(address)
    }

    // MARK: - Asking and counting

    /// Nil when `key` may try `action` now; else the refusal (counted in the metric).
    func refusal(_ action: Action, _ scope: Scope, key: String) -> RateLimitedError? {
        let limiter = limiter(action, scope)
        guard let wait = limiter.retryAfter(key, now: clock()) else { return nil }
        refusals.increment(action.rawValue, scope.rawValue)
        return RateLimitedError(action: action, scope: scope, limit: limiter.limit, retryAfter: wait)
    }

    /// Counts one failed attempt (or, for player creation, one creation) for `key`.
    func record(_ action: Action, _ scope: Scope, key: String) {
        limiter(action, scope).record(key, now: clock())
    }

    /// Asks and, when allowed, counts, in one step: for limits where every attempt counts.
    func take(_ action: Action, _ scope: Scope, key: String) throws(RateLimitedError) {
        let limiter = limiter(action, scope)
        guard let wait = limiter.take(key, now: clock()) else { return }
        refusals.increment(action.rawValue, scope.rawValue)
        throw RateLimitedError(action: action, scope: scope, limit: limiter.limit, retryAfter: wait)
    }

    /// The key the database counts `key` under, with this server's limit for it.
    func storedKey(_ action: Action, _ scope: Scope, key: String) -> RateLimitKey {
        let limit = limiter(action, scope).limit
        return RateLimitKey(action: action.rawValue, scope: scope.rawValue, key: key, count: limit.count, window: limit.window)
    }

    /// The refusal for a key the database found full: counted in the metric, and remembered
    /// in memory until it has room again, so this node refuses the key's next attempts
    /// without a database job (the failures may have been counted on other nodes).
    private func refusal(_ reached: RateLimitReached, _ action: Action) -> RateLimitedError {
        let scope = Scope(rawValue: reached.key.scope) ?? .address
        let limiter = limiter(action, scope)
        limiter.refuse(reached.key.key, now: clock(), for: .seconds(reached.retryAfter))
        refusals.increment(action.rawValue, scope.rawValue)
        return RateLimitedError(action: action, scope: scope, limit: limiter.limit, retryAfter: reached.retryAfter)
    }

    /// The one key the server-wide limits count under.
    static let serverKey = "server"

    /// A refusal of a new player from the address `addressKey` by this process's memory (that
    /// address or the whole server over its limit), counting nothing: the service thread asks
    /// this before the storage job, which asks the database (`takePlayerCreation`).
    func playerCreationRefusal(addressKey: String) -> RateLimitedError? {
        refusal(.playerCreate, .address, key: addressKey) ?? refusal(.playerCreate, .server, key: Self.serverKey)
    }

    /// Counts one new player from the address `addressKey` in the database, unless that
    /// address or the whole server is over its limit (then throws the refusal and counts
    /// nothing, so a refusal by the server's limit does not use up the address's allowance,
    /// nor the reverse). Every attempt counts, whether or not the player is then stored.
    /// Storage thread, in the job that creates the player.
    func takePlayerCreation(addressKey: String, in store: any RateLimitRepository, now: Date) throws {
        if let refusal = playerCreationRefusal(addressKey: addressKey) { throw refusal }
        do {
            try store.take([storedKey(.playerCreate, .address, key: addressKey),
                            storedKey(.playerCreate, .server, key: Self.serverKey)], now: now)
        } catch let reached as RateLimitReached {
            throw refusal(reached, .playerCreate)
        }
        record(.playerCreate, .address, key: addressKey)
        record(.playerCreate, .server, key: Self.serverKey)
        pruneIfDue(store, now: now)
    }

    /// Counts one operator sign-in from the address `addressKey` in the database, unless it is
    /// over its limit (then throws the refusal and counts nothing). Every attempt counts,
    /// whatever the password: the check itself is the cost being bounded. Storage thread.
    func takeOperatorSignIn(addressKey: String, in store: any RateLimitRepository, now: Date) throws {
        if let refusal = refusal(.operatorSignIn, .address, key: addressKey) { throw refusal }
        do {
            try store.take([storedKey(.operatorSignIn, .address, key: addressKey)], now: now)
        } catch let reached as RateLimitReached {
            throw refusal(reached, .operatorSignIn)
        }
        record(.operatorSignIn, .address, key: addressKey)
        pruneIfDue(store, now: now)
    }

    /// Runs `attempt` unless one of `keys` is over the `action`'s limit (then throws the
    /// refusal, and nothing runs). The attempt is counted for every key in the database before
    /// it runs, and uncounted unless it throws a failure `counts` recognises: so attempts at
    /// once on any node never get more than the limit's worth of tries. Call it on the storage
    /// thread, inside the job that makes the attempt.
    func guarded<T>(_ action: Action, _ keys: [(Scope, String)], counts: (any Error) -> Bool,
                    in store: any RateLimitRepository, now: Date, _ attempt: () throws -> T) throws -> T {
        for (scope, key) in keys {
            if let refusal = refusal(action, scope, key: key) { throw refusal }
        }
        let ticket: RateLimitTicket
        do {
            ticket = try store.take(keys.map { storedKey(action, $0.0, key: $0.1) }, now: now)
        } catch let reached as RateLimitReached {
            throw refusal(reached, action)
        }
        pruneIfDue(store, now: now)
        // An uncount that fails (the database gone meanwhile) leaves one failure counted too
        // many until the window passes: on the side of the secret, and the attempt's own
        // answer, committed already, still goes out.
        let value: T
        do {
            value = try attempt()
        } catch {
            if counts(error) {
                for (scope, key) in keys { record(action, scope, key: key) }
            } else {
                try? store.release(ticket)
            }
            throw error
        }
        try? store.release(ticket)
        return value
    }

    /// Signs a device in, counting a token that signs nobody in against the address, and
    /// refusing (without looking the token up) once the address is over the limit. Storage
    /// thread: the HTTP API's signed-in routes and the game side's `hello` both come here.
    ///
    /// Nearly every token signs someone in, so the database is only read before the look-up
    /// (one SELECT), and a failure is counted after it, under the key's lock: a failure past
    /// the limit (others counted meanwhile, on any node) is answered as the refusal, so no
    /// more than the limit are ever told "unauthorized". Tokens are 256 bits: what the limit
    /// bounds is the look-ups, not a chance of guessing one.
    func signIn(token: String, address: String, players: PlayerRepository, in store: any RateLimitRepository,
                now: Date) throws -> AuthenticatedDevice {
        let key = Self.addressKey(address)
        if let refusal = refusal(.signIn, .address, key: key) { throw refusal }
        let stored = [storedKey(.signIn, .address, key: key)]
        if let reached = try store.refusal(stored, now: now) { throw refusal(reached, .signIn) }
        do {
            return try players.authenticate(token: token, now: now)
        } catch where Self.isFailedSignIn(error) {
            do {
                try store.take(stored, now: now)
            } catch let reached as RateLimitReached {
                throw refusal(reached, .signIn)
            }
            record(.signIn, .address, key: key)
            pruneIfDue(store, now: now)
            throw error
        }
    }

    /// Deletes the stored counts older than the longest window, at most once a minute per
    /// process, in the storage job that just counted (any storage thread; the time is behind
    /// a lock). A failure is left for the next minute: the rows it would have deleted count
    /// for nothing meanwhile.
    private func pruneIfDue(_ store: any RateLimitRepository, now: Date) {
        let due = nextPrune.withLock { next -> Bool in
            guard now >= next else { return false }
            next = now.addingTimeInterval(Self.pruneInterval)
            return true
        }
        guard due else { return }
        _ = try? store.prune(before: now.addingTimeInterval(-longestStoredWindow))
    }

    /// How often each process deletes old rows of the stored counts.
    static let pruneInterval: TimeInterval = 60

    static func isFailedSignIn(_ error: any Error) -> Bool {
        (error as? StoreError)?.code == .unauthorized
    }

    /// A refusal about the code itself: unknown, malformed, expired, used up. Not a conflict
    /// (a valid code the player cannot use, such as one who already has unlimited play).
    static func isFailedCodeGuess(_ error: any Error) -> Bool {
        guard let error = error as? StoreError, error.field == "code" else { return false }
        return [.invalid, .notFound, .expired].contains(error.code)
    }
}

/// What a rate limit refused: HTTP answers 429 with Retry-After (`APIError`), the game side
/// an `error` with `retryAfter` and close 4429 (`WebSocketHub`).
struct RateLimitedError: Error, Sendable, Equatable {
    let action: RateLimits.Action
    let scope: RateLimits.Scope
    let limit: RateLimit
    /// Whole seconds, at least 1, until the action is allowed again.
    let retryAfter: Int

    var message: String {
        let what: String
        switch (action, scope) {
        case (.playerCreate, .server): what = "Too many new players joined this server in the last minutes"
        case (.playerCreate, _): what = "Too many new players from your address"
        case (.linkCodeClaim, _): what = "Too many link codes that matched nothing from your address"
        case (.codeRedeem, .player): what = "You entered too many codes that did not work"
        case (.codeRedeem, _): what = "Too many codes that did not work from your address"
        case (.signIn, _): what = "Too many device tokens that signed nobody in from your address"
        case (.checkoutOpen, _): what = "You started too many purchases"
        case (.operatorSignIn, _): what = "Too many sign-ins to the console from your address"
        }
        return what + ": at most \(limit.sentence). Try again in \(retryAfter) s."
    }
}
