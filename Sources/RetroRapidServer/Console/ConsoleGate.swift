import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// The one way into the console's API: every route but sign-in goes through here, so nothing
/// of the console answers without a live session, and no change without its CSRF token and
/// an admin's role.
///
/// In order, before any database job: the session cookie names a live session (else 401);
/// for a change, the request's `Origin`, when sent, is this console's own (else 403), its
/// `X-CSRF-Token` is the session's (else 403), and the session's role is admin (else 403).
/// Then, on the storage thread in the same job as the work, the account is read again: a
/// disabled account ends every session it has (401), and the role stored is the one obeyed.
///
/// Threading: `run` on the service thread of the console's listener; the work on a storage
/// thread; the answer from the worker's completion (any thread; `HTTPResponder` takes it).
struct ConsoleGate: Sendable {
    let worker: DatabaseWorker
    let sessions: ConsoleSessions
    let logger: Logger

    /// The name of the cookie that holds the session's token.
    static let cookieName = "rr_console"

    /// What a route's work gets: who is signed in, from the database.
    struct Operator: Sendable {
        let account: OperatorAccount
        /// `console:NAME`, what the audit log names.
        var actor: String { "console:" + account.name }
    }

    enum Need: Sendable {
        /// Reading: any signed-in operator.
        case view
        /// Changing: an admin, with the CSRF token.
        case change
    }

    func run(_ request: HTTPRequest, _ responder: HTTPResponder, _ need: Need,
             _ work: @escaping @Sendable (StorageContext, Operator, Date) throws -> HTTPResponse) {
        perform(request, responder, need, work, then: { responder.respond($0) })
    }

    /// Like `run`, for work whose answer is followed by something on the service thread:
    /// `then` gets what `work` returned and answers itself.
    func perform<T: Sendable>(_ request: HTTPRequest, _ responder: HTTPResponder, _ need: Need,
                              _ work: @escaping @Sendable (StorageContext, Operator, Date) throws -> T,
                              then: @escaping @Sendable (T) -> Void) {
        let token: String
        do {
            (token, _) = try session(request, need)
        } catch {
            return responder.respond(error.response)
        }
        let sessions = self.sessions
        let logger = self.logger
        worker.perform({ storage -> T in
            let signedIn = try Self.account(storage, token: token, sessions: sessions)
            if need == .change && signedIn.account.role != .admin { throw Self.viewerRefusal }
            return try work(storage, signedIn, storage.now)
        }, then: { result in
            switch result {
            case .success(let value): then(value)
            case .failure(let error): responder.respond(APIError(error, logger: logger).response)
            }
        })
    }

    /// The session the request's cookie names, checked for what `need` asks (no database).
    func session(_ request: HTTPRequest, _ need: Need) throws(APIError) -> (token: String, session: ConsoleSessions.Session) {
        guard let token = Self.cookie(Self.cookieName, in: request[header: "cookie"]),
              let session = sessions.use(token) else {
            throw APIError(status: 401, code: "unauthorized", message: "Sign in to the console first.")
        }
        guard need == .change else { return (token, session) }
        if let origin = request[header: "origin"], !Self.isOwnOrigin(origin, request: request) {
            throw APIError(status: 403, code: "forbidden", message: "A change must come from the console's own pages.")
        }
        guard let sent = request[header: "x-csrf-token"],
              HMACSHA256.constantTimeEquals(Array(sent.utf8), Array(session.csrfToken.utf8)) else {
            throw APIError(status: 403, code: "csrf", message: "This change lacks the session's CSRF token: reload the page and try again.")
        }
        guard session.role == .admin else { throw Self.viewerRefusal }
        return (token, session)
    }

    static let viewerRefusal = APIError(status: 403, code: "forbidden",
                                        message: "Your account may look but not change: changes need the admin role.")

    /// The account behind the session, as stored now. Storage thread.
    static func account(_ storage: StorageContext, token: String, sessions: ConsoleSessions) throws -> Operator {
        guard let session = sessions.use(token) else {
            throw APIError(status: 401, code: "unauthorized", message: "Sign in to the console first.")
        }
        // Accounts are never deleted, so one not found is as gone as a disabled one; a failing
        // database is a failure (500), not a reason to end sessions.
        let account: OperatorAccount?
        do {
            account = try storage.operators.account(named: session.operatorName).account
        } catch let error as StoreError where error.code == .notFound {
            account = nil
        }
        guard let account, !account.isDisabled else {
            sessions.endAll(of: session.operatorName)
            throw APIError(status: 401, code: "unauthorized", message: "This operator account is disabled.")
        }
        return Operator(account: account)
    }

    /// A cookie's value from a `Cookie` header (`a=1; b=2`), or nil.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Whether `origin` is the scheme and host the request was sent to (its `Host`).
    static func isOwnOrigin(_ origin: String, request: HTTPRequest) -> Bool {
        guard let host = request[header: "host"], !host.isEmpty else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }
}
