/// Maps method and path to handlers for everything that is not a static file.
///
/// Paths are templates: `/api/v1/devices/{id}` matches `/api/v1/devices/42` and gives the
/// handler `pathParameters["id"] == "42"`. Where two templates match, the one with a literal
/// segment earlier wins (`/api/v1/link-codes/claim` over `/api/v1/link-codes/{id}`).
///
/// The server hands the router every request under `apiPrefix`, every request for a path it
/// has a route for, and every request for a file that does not exist. Unknown API paths get
/// the JSON 404, other unknown paths an HTML 404 page, and a known path with the wrong method
/// the JSON 405.
public struct HTTPRouter: Sendable {
    /// Every path under this prefix belongs to the router, known or not.
    public static let apiPrefix = "/api"
    /// The route label for requests no route matched (metrics and logs).
    public static let unmatchedRoute = "unmatched"

    /// One route as registered: for the OpenAPI check, metrics and logs.
    public struct Route: Sendable, Hashable {
        public let method: HTTPMethod
        /// The template, e.g. `/api/v1/devices/{id}`.
        public let path: String
    }

    /// What the router saw of one answered request: for metrics and request logs.
    public struct Observation: Sendable {
        public let request: HTTPRequest
        /// The matched template, or `unmatchedRoute`.
        public let route: String
        public let response: HTTPResponse
        /// From the router receiving the request to the handler answering it.
        public let duration: Duration
    }

    private struct Entry: Sendable {
        let template: PathTemplate
        var handlers: [HTTPMethod: HTTPHandler]
    }

    private var entries: [Entry] = []
    /// Called once per answered request, on the thread that answered (the service thread for
    /// every handler of this server). Must not block.
    public var observer: (@Sendable (Observation) -> Void)?

    public init() {}

    /// The routes every server has: `GET /healthz`.
    public static var standard: HTTPRouter {
        var router = HTTPRouter()
        router.add(.get, "/healthz") { _ in .json(#"{"status":"ok"}"#) }
        return router
    }

    /// Adds a route whose handler may answer later (after a database job). A GET route also
    /// answers HEAD, without the body. Adding the same method and path again replaces it.
    public mutating func add(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        precondition(path.hasPrefix("/") && path.count > 1 && !path.hasSuffix("/"),
                     "route paths start with /, do not end with one, and are not / (the files): \(path)")
        if let index = entries.firstIndex(where: { $0.template.text == path }) {
            entries[index].handlers[method] = handler
        } else {
            entries.append(Entry(template: PathTemplate(path), handlers: [method: handler]))
        }
    }

    /// Adds a route answered at once, from memory.
    public mutating func add(_ method: HTTPMethod, _ path: String,
                             respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        add(method, path, handler: { request, responder in responder.respond(respond(request)) })
    }

    /// Every route, in a stable order (path, then method).
    public var routes: [Route] {
        entries.flatMap { entry in entry.handlers.keys.map { Route(method: $0, path: entry.template.text) } }
            .sorted { ($0.path, $0.method.rawValue) < ($1.path, $1.method.rawValue) }
    }

    /// Finds the handler and runs it; answers 404 or 405 itself.
    public func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let started = ContinuousClock.now
        var request = request
        let match = self.match(request.path)
        let responder = observer.map { observer in
            let seen = request
            let route = match?.entry.template.text ?? Self.unmatchedRoute
            return responder.observing { response in
                observer(Observation(request: seen, route: route, response: response,
                                     duration: ContinuousClock.now - started))
            }
        } ?? responder
        guard let (entry, parameters) = match else {
            guard Self.isAPIPath(request.path) else { return responder.respond(Self.pageNotFound) }
            return responder.respond(.error(status: 404, code: "not_found",
                                            message: "There is nothing at \(request.path)."))
        }
        let handlers = entry.handlers
        let method = request.method == .head && handlers[.head] == nil ? .get : request.method
        guard let handler = handlers[method] else {
            var allowed = handlers.keys.map(\.rawValue)
            if handlers[.get] != nil && handlers[.head] == nil { allowed.append("HEAD") }
            let allow = allowed.sorted().joined(separator: ", ")
            return responder.respond(.error(
                status: 405, code: "method_not_allowed",
                message: "\(request.method.rawValue) is not allowed on \(request.path); use \(allow).",
                headers: [HTTPHeader("allow", allow)]))
        }
        request.pathParameters = parameters
        handler(request, responder)
    }

    /// The route's answer when it answers at once; nil when it answers later. For tests and
    /// tools that call the router without a server.
    public func response(for request: HTTPRequest) -> HTTPResponse? {
        final class Box: @unchecked Sendable { var response: HTTPResponse? }
        let box = Box()
        handle(request, HTTPResponder { response in box.response = response })
        return box.response
    }

    private func match(_ path: String) -> (entry: Entry, parameters: [String: String])? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        var best: (entry: Entry, parameters: [String: String])?
        for entry in entries {
            guard let parameters = entry.template.match(segments) else { continue }
            if let current = best, !entry.template.isMoreSpecific(than: current.entry.template) { continue }
            best = (entry, parameters)
        }
        return best
    }

    static func isAPIPath(_ path: String) -> Bool {
        path == apiPrefix || path.hasPrefix(apiPrefix + "/")
    }

    /// For a path outside the API that is neither a route nor a file: libwebsockets hands a
    /// file mount's misses to the protocol callback, so they come here. People see this one,
    /// so it is a page rather than JSON.
    static let pageNotFound = HTTPResponse(
        status: 404, contentType: "text/html; charset=utf-8",
        headers: [HTTPHeader("cache-control", "no-store")],
        body: Array("""
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Page not found - RetroRapid Online</title><link rel="stylesheet" href="/style.css"></head>
            <body><main><h1>Page not found</h1>
            <p>There is no page at this address. <a href="/">Go to RetroRapid Online</a>.</p></main></body>
            </html>

            """.utf8))

    /// The URL prefixes libwebsockets must hand to the router rather than serve as files:
    /// the API, and the literal start of every other route.
    var mountpoints: [String] {
        let outsideAPI = entries.map(\.template).filter { !Self.isAPIPath($0.text) }.map(\.literalPrefix)
        return [Self.apiPrefix] + Set(outsideAPI).sorted()
    }
}

/// A route path split into segments, each a literal or a `{name}` parameter.
struct PathTemplate: Sendable, Hashable {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    let text: String
    let segments: [Segment]

    init(_ text: String) {
        self.text = text
        segments = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { piece in
            piece.hasPrefix("{") && piece.hasSuffix("}") && piece.count > 2
                ? .parameter(String(piece.dropFirst().dropLast())) : .literal(String(piece))
        }
    }

    /// The parameters, or nil when the path's segments do not fit. A parameter takes one
    /// non-empty segment.
    func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, piece) in zip(segments, path) {
            switch segment {
            case .literal(let literal): guard literal == piece else { return nil }
            case .parameter(let name):
                guard !piece.isEmpty else { return nil }
                parameters[name] = piece
            }
        }
        return parameters
    }

    /// True when, at the first segment where the two differ in kind, this one is literal.
    func isMoreSpecific(than other: PathTemplate) -> Bool {
        for (mine, theirs) in zip(segments, other.segments) {
            switch (mine, theirs) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return false
    }

    /// The path up to its first parameter, for a libwebsockets mount.
    var literalPrefix: String {
        var prefix = ""
        for segment in segments {
            guard case .literal(let literal) = segment else { break }
            prefix += "/" + literal
        }
        return prefix
    }
}
