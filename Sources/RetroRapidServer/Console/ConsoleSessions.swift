import Foundation
import RetroRapidDomain
import Synchronization

/// The operator console's signed-in sessions, in this process's memory: a restart signs every
/// operator out, and a session opened on one node is good on that node only (each node's
/// console stands alone; the data behind it is shared).
///
/// A session is named by a 256-bit random token the browser keeps in an HttpOnly,
/// SameSite=Strict cookie; only the token's SHA-256 is kept here, so a copy of this table (a
/// core dump) signs nobody in. Each session has its own CSRF token, sent back in
/// `X-CSRF-Token` with every change. A session ends when its operator signs out, after
/// `idleLimit` without a request, `lifetimeLimit` after sign-in, or when its account is found
/// disabled.
///
/// Threading: any thread (one lock).
final class ConsoleSessions: Sendable {
    struct Session: Sendable, Equatable {
        let operatorName: String
        let role: OperatorAccount.Role
        let csrfToken: String
        let signedInAt: ContinuousClock.Instant
        var lastUsedAt: ContinuousClock.Instant
    }

    static let idleLimit: Duration = .seconds(30 * 60)
    static let lifetimeLimit: Duration = .seconds(12 * 3600)
    /// The most sessions kept at once; the oldest goes first. Sign-in is rate-limited, so this
    /// only bounds memory against a flood of good passwords.
    static let maximumCount = 1000

    private let sessions = Mutex<[String: Session]>([:])
    private let clock: @Sendable () -> ContinuousClock.Instant

    init(clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.clock = clock
    }

    /// Opens a session; returns the token for the cookie and the session.
    func open(operatorName: String, role: OperatorAccount.Role) -> (token: String, session: Session) {
        let token = Self.randomToken()
        let now = clock()
        let session = Session(operatorName: operatorName, role: role, csrfToken: Self.randomToken(),
                              signedInAt: now, lastUsedAt: now)
        sessions.withLock { sessions in
            sessions = sessions.filter { !Self.hasExpired($0.value, now: now) }
            if sessions.count >= Self.maximumCount, let oldest = sessions.min(by: { $0.value.signedInAt < $1.value.signedInAt }) {
                sessions[oldest.key] = nil
            }
            sessions[Self.key(token)] = session
        }
        return (token, session)
    }

    /// The live session `token` names, marked used now; nil (and forgotten) when it expired.
    func use(_ token: String) -> Session? {
        let now = clock()
        let key = Self.key(token)
        return sessions.withLock { sessions in
            guard var session = sessions[key] else { return nil }
            guard !Self.hasExpired(session, now: now) else {
                sessions[key] = nil
                return nil
            }
            session.lastUsedAt = now
            sessions[key] = session
            return session
        }
    }

    func end(_ token: String) {
        _ = sessions.withLock { $0.removeValue(forKey: Self.key(token)) }
    }

    /// Ends every session of `operatorName` (the account was found disabled).
    func endAll(of operatorName: String) {
        sessions.withLock { sessions in sessions = sessions.filter { $0.value.operatorName != operatorName } }
    }

    var count: Int { sessions.withLock { $0.count } }

    private static func hasExpired(_ session: Session, now: ContinuousClock.Instant) -> Bool {
        now - session.lastUsedAt >= idleLimit || now - session.signedInAt >= lifetimeLimit
    }

    private static func key(_ token: String) -> String {
        SHA256.hexDigest(Array(token.utf8))
    }

    /// 256 bits from the system's CSPRNG, written as a device token is (43 base64url characters).
    static func randomToken() -> String {
        DeviceToken.generate().text
    }
}
