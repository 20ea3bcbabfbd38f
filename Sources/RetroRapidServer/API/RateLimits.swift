import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// Every limit on creating players and on guessing a secret (a promo code, a link code, a
/// device token), shared by the HTTP API and the game side (a token guessed in `hello` costs
/// what one guessed over HTTP does), and the counter of what they refused:
/// `retrorapid_rate_limited_total{action,scope}`.
///
/// Creating a player costs a slot each time. For the rest only a failed guess costs one, so a
/// player who types one valid code is never held up; a refusal itself costs nothing, so a
/// client that waits its Retry-After gets in. The check that counts runs on the storage
/// thread, in the same job as the attempt and the record of its failure: jobs run one at a
/// time, so 300 guesses sent at once still get at most the limit's worth of answers. The
/// route also asks on the service thread first, so a client already over a limit costs no
/// database job at all.
///
/// Threading: any thread (each `RateLimiter` has its lock; the counter its own).
final class RateLimits: Sendable {
    /// The thing limited: the `action` label.
    enum Action: String, Sendable, CaseIterable {
        case playerCreate = "player_create"
        case linkCodeClaim = "link_code_claim"
        case codeRedeem = "code_redeem"
        case signIn = "sign_in"
        case checkoutOpen = "checkout_open"
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
    private let refusals: Counter
    /// What the limiter's clock reads; tests move it.
    let clock: @Sendable () -> ContinuousClock.Instant

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
        (.signIn, .address), (.checkoutOpen, .player),
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

    /// The one key the server-wide limits count under.
    static let serverKey = "server"

    /// Counts one new player from the address `addressKey`, unless that address or the whole
    /// server is over its limit (then throws the refusal and counts nothing, so a refusal by
    /// the server's limit does not use up the address's allowance, nor the reverse). Service
    /// thread (`PlayerRoutes.createPlayer`): one caller at a time, so ask-then-count is exact.
    func takePlayerCreation(addressKey: String) throws(RateLimitedError) {
        if let refusal = refusal(.playerCreate, .address, key: addressKey) { throw refusal }
        if let refusal = refusal(.playerCreate, .server, key: Self.serverKey) { throw refusal }
        record(.playerCreate, .address, key: addressKey)
        record(.playerCreate, .server, key: Self.serverKey)
    }

    /// Runs `attempt` unless one of `keys` is over the `action`'s limit (then throws the
    /// refusal, and nothing runs); when it throws a failure `counts` recognises, counts it for
    /// every key. Call it on the storage thread, inside the job that makes the attempt.
    func guarded<T>(_ action: Action, _ keys: [(Scope, String)], counts: (any Error) -> Bool,
                    _ attempt: () throws -> T) throws -> T {
        for (scope, key) in keys {
            if let refusal = refusal(action, scope, key: key) { throw refusal }
        }
        do {
            return try attempt()
        } catch {
            if counts(error) {
                for (scope, key) in keys { record(action, scope, key: key) }
            }
            throw error
        }
    }

    /// Signs a device in, counting a token that signs nobody in against the address, and
    /// refusing (without looking the token up) once the address is over the limit. Storage
    /// thread: the HTTP API's signed-in routes and the game side's `hello` both come here.
    func signIn(token: String, address: String, players: PlayerRepository, now: Date) throws -> AuthenticatedDevice {
        try guarded(.signIn, [(.address, Self.addressKey(address))], counts: Self.isFailedSignIn) {
            try players.authenticate(token: token, now: now)
        }
    }

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
        }
        return what + ": at most \(limit.sentence). Try again in \(retryAfter) s."
    }
}
