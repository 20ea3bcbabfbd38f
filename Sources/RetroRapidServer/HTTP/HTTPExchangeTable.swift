import RetroRapidLWS

/// The live HTTP exchanges of one context, by connection (for callbacks) and by id (for answers
/// that come later, from other threads, through the mailbox).
///
/// Threading rule: service thread only (tests read it after the context has stopped).
final class HTTPExchangeTable {
    private var byConnection: [LWSConnection: HTTPExchange] = [:]
    private var byID: [UInt64: HTTPExchange] = [:]
    private var lastID: UInt64 = 0
    /// Answers that came for an exchange already gone (its client left): for tests and logs.
    private(set) var droppedAnswerCount = 0

    var count: Int { byID.count }

    /// Starts the exchange of a request that just arrived on `connection` (ending any earlier one).
    func register(on connection: LWSConnection, request: HTTPRequest, expectsBody: Bool) -> HTTPExchange {
        release(of: connection)
        lastID += 1
        let exchange = HTTPExchange(id: lastID, connection: connection, request: request, expectsBody: expectsBody)
        byConnection[connection] = exchange
        byID[exchange.id] = exchange
        return exchange
    }

    func exchange(of connection: LWSConnection) -> HTTPExchange? {
        byConnection[connection]
    }

    func exchange(id: UInt64) -> HTTPExchange? {
        byID[id]
    }

    /// Forgets the exchange on `connection`, if any: its response is written, or the connection
    /// is going. An answer that comes for it later finds nothing.
    func release(of connection: LWSConnection) {
        guard let exchange = byConnection.removeValue(forKey: connection) else { return }
        byID[exchange.id] = nil
    }

    /// An answer came for an exchange no longer here.
    func answerDropped() {
        droppedAnswerCount += 1
    }
}
