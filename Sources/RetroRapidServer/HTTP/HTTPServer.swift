#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import RetroRapidLWS
import RetroRapidSupport
import Synchronization

/// Where and what the HTTP server serves.
public struct HTTPServerOptions: Sendable, Equatable {
    /// A numeric IPv4 or IPv6 address to listen on (or "localhost", meaning 127.0.0.1);
    /// "0.0.0.0" or "::" (or "") for every interface.
    public var host: String
    /// The TCP port; 0 lets the kernel choose (read `HTTPServer.boundPort`).
    public var port: Int
    /// The folder served at `/`, relative to the working directory or absolute.
    public var webRoot: String
    /// The folder served at `/fonts`, relative to the working directory or absolute; nil, or a
    /// path that is not a directory, serves no `/fonts` (the stylesheet falls back).
    public var fontsPath: String?
    /// PEM certificate and private key: give both to serve HTTPS instead of HTTP.
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    public var eventLoop: EventLoop
    /// `--allowed-origins`: their WebSocket forms join the CSP's `connect-src`.
    public var allowedOrigins: [WebOrigin]
    /// Where pages may open game connections besides the site: this node's `--game-url` and
    /// the `--game-url-sources`, as `connect-src` sources.
    public var gameURLSources: [String] = []
    /// What every request's head is held to before a route or file sees it.
    public var requestLimits: HTTPRequestLimits

    public init(host: String = "0.0.0.0", port: Int = 8080, webRoot: String = "Web", fontsPath: String? = nil,
                tlsCertificatePath: String? = nil, tlsPrivateKeyPath: String? = nil, eventLoop: EventLoop = .libev,
                allowedOrigins: [WebOrigin] = [],
                requestLimits: HTTPRequestLimits = HTTPRequestLimits()) {
        self.eventLoop = eventLoop
        self.allowedOrigins = allowedOrigins
        self.requestLimits = requestLimits
        self.host = host
        self.port = port
        self.webRoot = webRoot
        self.fontsPath = fontsPath
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsPrivateKeyPath = tlsPrivateKeyPath
    }

    /// What `retrorapid serve`'s configuration asks of the HTTP side, read from it in this one
    /// place (its defaults and validation are `ServerConfiguration`'s). `fontsPath` is the
    /// configured one when it exists. (Who counts as a trusted proxy is the one
    /// `ClientAddressResolver` the server hands to `HTTPServer`.)
    public init(_ configuration: ServerConfiguration, fontsPath: String?) {
        self.init(host: configuration.host, port: configuration.port, webRoot: configuration.webRoot,
                  fontsPath: fontsPath,
                  tlsCertificatePath: configuration.tlsCertificatePath, tlsPrivateKeyPath: configuration.tlsKeyPath,
                  eventLoop: configuration.eventLoop,
                  allowedOrigins: configuration.allowedOrigins.compactMap(WebOrigin.init),
                  requestLimits: HTTPRequestLimits(configuration: configuration))
        let own = configuration.gameURL.flatMap(GameURL.init).map(\.connectSource)
        gameURLSources = (own.map { [$0] } ?? []) + configuration.gameURLSources.filter { $0 != own }
    }
}

/// The HTTP server: static files from the web root at `/`, the router's routes (`/healthz`,
/// everything under `/api`), one libwebsockets service thread.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerOptions
    /// Work for the service thread from other threads; kept across restarts.
    public let mailbox: ServiceMailbox
    private let router: HTTPRouter
    private let protocols: [LWSProtocolDefinition]
    /// Who a request counts as coming from (the server's one rule, from `GameServer`).
    private let clientAddresses: ClientAddressResolver
    private let onRefusal: @Sendable (HTTPRefusalRecord) -> Void
    private let running = Mutex<Running?>(nil)

    private struct Running: Sendable {
        let context: LWSContext
        let port: Int
    }

    /// Headers on every response, files and routes alike. Written here rather than with
    /// LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE because that option's CSP
    /// has no media-src or manifest-src (so `default-src 'none'` would block the client's audio
    /// files and web manifest) and it sends the deprecated X-XSS-Protection. No inline script
    /// or style is allowed. `connect-src` is 'self', which current browsers let cover ws:/wss:
    /// to the page's own host and port, plus the WebSocket form of each allowed origin, so a
    /// script injected into a page cannot open a socket to any other host (Safari before 16
    /// needs the site's own wss:// listed: docs/OPERATIONS.md), and the nodes' game URLs a page
    /// may move its game connection to.
    static func securityHeaders(allowedOrigins: [WebOrigin] = [], gameURLSources: [String] = []) -> [(name: String, value: String)] {
        let sockets = allowedOrigins.map(\.webSocketForm) + gameURLSources.filter { !allowedOrigins.map(\.webSocketForm).contains($0) }
        let connect = (["'self'"] + sockets).joined(separator: " ")
        return [
            ("content-security-policy:",
             "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                + "font-src 'self'; media-src 'self'; manifest-src 'self'; connect-src \(connect); "
                + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
            ("x-content-type-options:", "nosniff"),
            ("referrer-policy:", "no-referrer"),
            ("x-frame-options:", "DENY"),
            ("cross-origin-opener-policy:", "same-origin"),
        ]
    }

    /// HSTS is sent only when this server itself terminates TLS.
    static let strictTransportSecurity = (name: "strict-transport-security:", value: "max-age=15552000")

    /// - Parameter onRefusal: told of each request the HTTP layer refuses itself, before any
    ///   route or file (service thread; must not block).
    public convenience init(configuration: HTTPServerOptions, router: HTTPRouter = .standard,
                            mailbox: ServiceMailbox = ServiceMailbox(),
                            onRefusal: @escaping @Sendable (HTTPRefusalRecord) -> Void = { _ in }) {
        self.init(configuration: configuration, router: router, mailbox: mailbox, protocols: [], onRefusal: onRefusal)
    }

    /// - Parameters:
    ///   - protocols: libwebsockets protocols after the HTTP one (the WebSocket side).
    ///   - clientAddresses: which address a client counts as behind a reverse proxy.
    init(configuration: HTTPServerOptions, router: HTTPRouter, mailbox: ServiceMailbox,
         protocols: [LWSProtocolDefinition], clientAddresses: ClientAddressResolver = .direct,
         onRefusal: @escaping @Sendable (HTTPRefusalRecord) -> Void = { _ in }) {
        self.configuration = configuration
        self.router = router
        self.mailbox = mailbox
        self.protocols = protocols
        self.clientAddresses = clientAddresses
        self.onRefusal = onRefusal
    }

    deinit {
        stop()
    }

    /// The port the server listens on (the kernel's choice when configured with 0); nil when
    /// not running.
    public var boundPort: Int? {
        running.withLock { $0?.port }
    }

    /// Connections open now, HTTP and WebSocket; 0 when not running. Any thread.
    public var openConnectionCount: Int {
        running.withLock { $0?.context.openConnectionCount } ?? 0
    }

    /// Whether the calling thread is the service thread of the running server.
    public var isServiceThread: Bool {
        running.withLock { $0?.context.isServiceThread } ?? false
    }

    /// The first step of a graceful stop: new connections are closed as soon as they are
    /// accepted, open ones are still served. Any thread.
    public func stopAccepting() {
        running.withLock { $0?.context.stopAccepting() }
    }

    /// Waits until every HTTP exchange has been answered and written, or `timeout` passed;
    /// true when none is left. For a graceful stop, after the last answers were posted. Not
    /// from the service thread.
    public func waitForOpenExchanges(timeout: Duration) -> Bool {
        guard let context = running.withLock({ $0?.context }), !context.isServiceThread else { return true }
        let deadline = ContinuousClock.now + timeout
        while true {
            let answered = DispatchSemaphore(value: 0)
            let open = Mutex(0)
            mailbox.post {
                open.withLock { $0 = context.openExchangeCount }
                answered.signal()
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero, answered.wait(timeout: .now() + left.seconds) == .success else { return false }
            if open.withLock({ $0 }) == 0 { return true }
            usleep(10_000)
        }
    }

    /// Starts listening and serving on a new service thread; returns once the port is bound.
    public func start() throws(HTTPServerError) {
        let options = try makeContextOptions()
        try running.withLock { (running: inout Running?) throws(HTTPServerError) in
            guard running == nil else {
                throw HTTPServerError(.alreadyStarted, "The server is already running.")
            }
            let context = LWSContext(options: options, mailbox: mailbox)
            do throws(LWSContextError) {
                running = Running(context: context, port: try context.start())
            } catch {
                throw listenError(error)
            }
        }
    }

    /// Stops serving: closes every connection, destroys the libwebsockets context and joins its
    /// thread before returning; the port is free afterwards. Safe to call more than once.
    public func stop() {
        guard let context = running.withLock({ $0?.context }) else { return }
        context.stop()  // every caller waits here until the context is gone
        running.withLock { running in
            if running?.context === context { running = nil }
        }
    }

    // MARK: - Setup

    private func makeContextOptions() throws(HTTPServerError) -> LWSContextOptions {
        let address = try Self.listenAddress(configuration.host)
        guard (0...65535).contains(configuration.port) else {
            throw HTTPServerError(.invalidPort, "The port \(configuration.port) is not between 0 and 65535.")
        }
        let files = try StaticFiles(webRoot: configuration.webRoot)
        let fonts = configuration.fontsPath.flatMap(FontFiles.init(path:))
        var headers = Self.securityHeaders(allowedOrigins: configuration.allowedOrigins, gameURLSources: configuration.gameURLSources)
        let tls = try tlsPaths()
        if tls != nil { headers.append(Self.strictTransportSecurity) }
        let router = self.router
        return LWSContextOptions(
            address: address,
            port: configuration.port,
            mounts: [files.mount] + (fonts.map { [$0.mount] } ?? [])
                + router.mountpoints.map { .callback(mountpoint: $0) },
            responseHeaders: headers,
            httpHandler: { request, responder in router.handle(request, responder) },
            tlsCertificatePath: tls?.certificate,
            tlsPrivateKeyPath: tls?.key,
            protocols: protocols,
            eventLoop: configuration.eventLoop,
            requestLimits: configuration.requestLimits,
            clientAddresses: clientAddresses,
            onRefusal: onRefusal
        )
    }

    /// libwebsockets takes an interface name or a numeric address and, for a name that does not
    /// exist yet, waits for it to appear instead of failing; so only numeric addresses go in.
    static func listenAddress(_ host: String) throws(HTTPServerError) -> String? {
        if ["", "0.0.0.0", "::", "*"].contains(host) { return nil }
        if host == "localhost" { return "127.0.0.1" }
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET, host, &ipv4) == 1 || inet_pton(AF_INET6, host, &ipv6) == 1 else {
            throw HTTPServerError(.invalidHost,
                "The host '\(host)' is not an IP address. Use one such as 127.0.0.1, or 0.0.0.0 for every interface.")
        }
        return host
    }

    private func tlsPaths() throws(HTTPServerError) -> (certificate: String, key: String)? {
        switch (configuration.tlsCertificatePath, configuration.tlsPrivateKeyPath) {
        case (nil, nil):
            return nil
        case let (certificate?, key?):
            for path in [certificate, key] where !FileManager.default.isReadableFile(atPath: path) {
                throw HTTPServerError(.tlsFilesMissing, "The TLS file \(path) does not exist or cannot be read.")
            }
            return (certificate, key)
        default:
            throw HTTPServerError(.tlsFilesMissing, "HTTPS needs both a certificate and a private key file.")
        }
    }

    private func listenError(_ error: LWSContextError) -> HTTPServerError {
        let place = "\(configuration.host):\(configuration.port)"
        switch error {
        case .contextCreationFailed:
            return HTTPServerError(.listenFailed, "libwebsockets could not create its context; see the messages above.")
        case .listenFailed(errno: EADDRINUSE?):
            return HTTPServerError(.portInUse,
                "Cannot listen on \(place): the port is already in use. Stop the other server or choose another port.")
        case .listenFailed(errno: EADDRNOTAVAIL?):
            return HTTPServerError(.addressUnavailable,
                "Cannot listen on \(place): this machine has no such address. Use one of its addresses, or 0.0.0.0.")
        case .listenFailed(errno: EACCES?):
            return HTTPServerError(.permissionDenied,
                "Cannot listen on \(place): permission denied. Ports below 1024 need privileges; choose a higher port.")
        case .listenFailed(errno: nil) where configuration.tlsCertificatePath != nil:
            return HTTPServerError(.tlsFilesMissing,
                "Cannot serve HTTPS on \(place): libwebsockets could not load the certificate or key (see its messages above). Both must be PEM files that belong together.")
        case .listenFailed(let code):
            let reason = code.map { String(cString: strerror($0)) } ?? "see the libwebsockets messages above"
            return HTTPServerError(.listenFailed, "Cannot listen on \(place): \(reason).")
        }
    }
}
