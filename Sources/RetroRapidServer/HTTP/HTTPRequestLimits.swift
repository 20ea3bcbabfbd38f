import RetroRapidSupport

/// Every bound an HTTP request is held to before a handler or the file mount sees it, in one
/// place so docs/API.md, docs/OPERATIONS.md and the code agree. A request over one of them is
/// answered with the API's JSON error and the connection is closed.
public struct HTTPRequestLimits: Sendable, Equatable {
    /// The request target (path and query, as sent) may be this long; more answers 414.
    public var maxTargetBytes = 4096
    /// The header fields together (names and values, the request line not counted) may be
    /// this long; more answers 431.
    public var maxHeaderBytes = 8192
    /// Query parameters a request may carry; more answers 400.
    public var maxQueryParameters = 32
    /// libwebsockets' buffer for one request's head (`max_http_header_data`): above our own
    /// limits, so they are the ones a client meets. A head that does not fit even this is
    /// dropped by libwebsockets without an answer (docs/API.md says so).
    public var headerBufferBytes = 16 * 1024
    /// A request's headers and body must both be in this long after the request began (the
    /// connection opened, or its previous answer went out); then it is answered 408.
    public var requestTimeoutSeconds = 30
    /// libwebsockets' own limit on the head alone (`timeout_secs_ah_idle`); a head still
    /// incomplete then is dropped without an answer, since there is no request to answer yet.
    public var headerTimeoutSeconds: Int { min(requestTimeoutSeconds, 10) }
    /// libwebsockets' own limit on silence within a body (its `timeout_secs`, left at its
    /// default): a body that stops this long is cut, and answered 408 (LWSHTTPConnection.swift).
    public let bodySilenceSeconds = 5
    /// HTTP connections (not WebSockets, which have their own limit) one client address may
    /// have open; a request on one more answers 429.
    public var maxConnectionsPerIP = 128

    public init() {}

    public init(configuration: ServerConfiguration) {
        requestTimeoutSeconds = configuration.httpRequestTimeoutSeconds
        maxConnectionsPerIP = configuration.maxHTTPConnectionsPerIP
    }
}
