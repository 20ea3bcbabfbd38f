import RetroRapidLWS

/// One request and its response on one connection, from LWS_CALLBACK_HTTP until the response
/// is written or the connection ends. The context keeps it in its `HTTPExchangeTable`, by
/// connection (for callbacks) and by `id` (for answers that come later, from other threads).
///
/// It must be gone before `lws_http_transaction_completed`, which, for a request that reached
/// us as a file mount's miss, frees and reuses the connection's state.
final class HTTPExchange {
    /// Never reused, so an answer for an exchange that ended cannot reach another one.
    let id: UInt64
    /// Valid while the exchange is in the context's table: removed there before libwebsockets
    /// frees the connection.
    let connection: LWSConnection
    var request: HTTPRequest
    /// The request announced a body (Content-Length > 0); the handler runs once it is all in.
    var expectsBody: Bool
    /// The handler is running now (inside the callback that called it): an answer it gives
    /// meanwhile is written when it returns, not through WRITEABLE.
    var handlerRunning = false
    /// An answer given and not yet written.
    var answer: HTTPResponse?
    var responseStarted = false
    var closesAfterResponse = false
    /// The response body still to send from `sendOffset`.
    var pendingBody: [UInt8] = []
    var sendOffset = 0
    var sending = false

    init(id: UInt64, connection: LWSConnection, request: HTTPRequest, expectsBody: Bool) {
        self.id = id
        self.connection = connection
        self.request = request
        self.expectsBody = expectsBody
    }
}
