/// What ``RateLimitRepository/take(_:now:)`` counted: the rows of its events, one per key, so
/// ``RateLimitRepository/release(_:)`` can uncount exactly those when the attempt they were
/// taken for turns out not to be a failure.
public struct RateLimitTicket: Sendable, Equatable {
    public let eventIDs: [Int64]

    public init(eventIDs: [Int64]) {
        self.eventIDs = eventIDs
    }
}
