/// Answers a request. Runs on the libwebsockets service thread, so it must not block: answer
/// from memory, and hand anything slow (SQLite) to another thread.
public typealias HTTPHandler = @Sendable (HTTPRequest) -> HTTPResponse

/// Maps paths to handlers for everything that is not a static file.
///
/// The server hands the router every request under `apiPrefix`, every request for a path it
/// has a route for, and every request for a file that does not exist. Unknown API paths get
/// the JSON 404, other unknown paths an HTML 404 page, and a known path with the wrong method
/// the JSON 405.
public struct HTTPRouter: Sendable {
    /// Every path under this prefix belongs to the router, known or not.
    public static let apiPrefix = "/api"

    private var routes: [String: [HTTPMethod: HTTPHandler]] = [:]

    public init() {}

    /// The routes every server has: `GET /healthz`.
    public static var standard: HTTPRouter {
        var router = HTTPRouter()
        router.add(.get, "/healthz") { _ in .json(#"{"status":"ok"}"#) }
        return router
    }

    /// Adds a route for an exact path. A GET route also answers HEAD, without the body.
    public mutating func add(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        precondition(path.hasPrefix("/") && path.count > 1 && !path.hasSuffix("/"),
                     "route paths start with /, do not end with one, and are not / (the files): \(path)")
        routes[path, default: [:]][method] = handler
    }

    public func response(for request: HTTPRequest) -> HTTPResponse {
        guard let handlers = routes[request.path] else {
            guard Self.isAPIPath(request.path) else { return Self.pageNotFound }
            return .error(status: 404, code: "not_found",
                          message: "There is nothing at \(request.path).")
        }
        let method = request.method == .head && handlers[.head] == nil ? .get : request.method
        guard let handler = handlers[method] else {
            var allowed = handlers.keys.map(\.rawValue)
            if handlers[.get] != nil && handlers[.head] == nil { allowed.append("HEAD") }
            let allow = allowed.sorted().joined(separator: ", ")
            return .error(status: 405, code: "method_not_allowed",
                          message: "\(request.method.rawValue) is not allowed on \(request.path); use \(allow).",
                          headers: [HTTPHeader("allow", allow)])
        }
        return handler(request)
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

    /// The URL prefixes libwebsockets must hand to the router rather than serve as files.
    var mountpoints: [String] {
        let outsideAPI = routes.keys.filter { !Self.isAPIPath($0) }
        return [Self.apiPrefix] + outsideAPI.sorted()
    }
}
