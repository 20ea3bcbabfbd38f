import Synchronization

/// The purchases whose checkout session is being opened at the payment provider right now, at
/// most one per player: a second purchase by the same player meanwhile (a double click, two
/// tabs) does not open a second session but waits for the first and gets the same order. The
/// storage side keeps the rule across processes (`OrderRepository.createOrder` returns the
/// order stored first); this keeps one process from asking the provider twice.
///
/// Threading rule: any thread (a mutex). `begin` runs on the service thread, `finish` where the
/// provider's answer ends up (the service thread, or one of URLSession's threads on a failure).
final class CheckoutOpenings: Sendable {
    private let waiting = Mutex<[Int64: [HTTPResponder]]>([:])

    /// True when the caller is to open the player's session; false when one is being opened
    /// already, and `responder` then gets that one's answer from `finish`.
    func begin(playerID: Int64, responder: HTTPResponder) -> Bool {
        waiting.withLock { waiting in
            if waiting[playerID] != nil {
                waiting[playerID]!.append(responder)
                return false
            }
            waiting[playerID] = []
            return true
        }
    }

    /// Ends the player's opening: answers every purchase that waited for it with `response`.
    func finish(playerID: Int64, answeringWaitersWith response: HTTPResponse) {
        let waiters = waiting.withLock { $0.removeValue(forKey: playerID) ?? [] }
        for waiter in waiters { waiter.respond(response) }
    }

    /// How many players' sessions are being opened (tests).
    var count: Int { waiting.withLock { $0.count } }
}
