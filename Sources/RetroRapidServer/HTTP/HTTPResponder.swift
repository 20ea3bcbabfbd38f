/// Answers a request: at once, or later (after a `DatabaseWorker` job). The first response
/// counts; later ones are ignored.
///
/// Runs on the libwebsockets service thread, so it must not block: answer from memory, or hand
/// the slow part to the `DatabaseWorker` and answer in its completion.
public typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

/// The one way a handler answers its request.
///
/// Threading rule: call `respond` from any thread; the response is written on the service
/// thread. The connection may have gone by then (the client gave up, the server stopped): the
/// responder names its exchange by id, never by `struct lws *`, and the service thread looks
/// the id up among the live exchanges before it writes, so nothing is written to a freed
/// connection and a late answer is simply dropped.
public struct HTTPResponder: Sendable {
    private let deliver: @Sendable (HTTPResponse) -> Void

    /// `deliver` takes the response to wherever it goes; tests and wrappers (metrics, logs)
    /// make their own.
    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.deliver = deliver
    }

    public func respond(_ response: HTTPResponse) {
        deliver(response)
    }

    /// A responder that first hands the response to `observe` (on the same thread), then on.
    public func observing(_ observe: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponder {
        let deliver = self.deliver
        return HTTPResponder { response in
            observe(response)
            deliver(response)
        }
    }
}
