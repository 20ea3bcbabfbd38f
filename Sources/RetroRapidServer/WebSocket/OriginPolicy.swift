import RetroRapidSupport

/// Which web pages may open a game connection: the WebSocket upgrade's `Origin` is checked
/// before the socket exists (RFC 6455 §10.2), because a browser lets any site's page connect
/// to any host and sends that page's origin with the upgrade. Pure.
///
/// Allowed: no `Origin` at all (not a browser: the load generator, tools, tests), an origin
/// whose host and port are the request's `Host` (a page of this very site, over http or
/// https), and the origins of `--allowed-origins` (the same site under another name, e.g.
/// behind a reverse proxy that sends its own `Host`). Everything else, `null` included (a
/// sandboxed page, a file), is refused with 403.
struct OriginPolicy: Sendable {
    let allowed: Set<WebOrigin>

    init(allowedOrigins: some Sequence<String>) {
        allowed = Set(allowedOrigins.compactMap(WebOrigin.init))
    }

    /// The refusal for an upgrade with these headers, or nil when it may go ahead.
    func refusal(origin: String?, host: String?) -> ProtocolError? {
        guard let origin else { return nil }
        if let parsed = WebOrigin(origin),
           host.map(parsed.isSameSite(asHost:)) == true || allowed.contains(parsed) {
            return nil
        }
        let shown = origin.count > 100 ? origin.prefix(100) + "…" : Substring(origin)
        return ProtocolError(.originNotAllowed,
            "Game connections are taken from this site's own pages and the origins in --allowed-origins; this page's origin (\(shown)) is not one of them.")
    }
}
