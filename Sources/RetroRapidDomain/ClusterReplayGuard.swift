/// Refuses a signed bus message that was already received: what the signature cannot tell,
/// since a copy of a genuine message is signed too. One bus sends its messages in order on one
/// connection, and PostgreSQL delivers one session's notifications in commit order, so from
/// each sending process (sender and `ClusterStamp.boot`) a message must carry a higher
/// `sequence` than the last one taken; anything else is a copy (or came out of order, which
/// the bus never does).
///
/// Memory stays small: a sending process is forgotten once its last message is two
/// ``ClusterSigner/window``s old, when any copy of its messages is `stale` anyway. Only
/// messages whose signature is right come here, so a forger cannot make it grow.
///
/// Not thread-safe: the bus's thread owns it.
public struct ClusterReplayGuard: Sendable {
    private struct Process: Hashable {
        let sender: String
        let boot: UInt64
    }

    /// The last sequence taken from each sending process, and the latest time it carried.
    private var latest: [Process: (sequence: UInt64, sentAt: Int64)] = [:]
    /// When the forgetting last ran (milliseconds since 1970), so it runs about once a window.
    private var sweptAt: Int64 = 0

    public init() {}

    /// How many sending processes it remembers.
    public var count: Int { latest.count }

    /// True, and remembered, when `stamp` is new from `sender`; false for a copy. `now` is
    /// the receiver's clock in milliseconds since 1970; `stamp` has passed `ClusterSigner.open`.
    public mutating func admit(sender: String, stamp: ClusterStamp, now: Int64) -> Bool {
        forgetOld(now: now)
        let process = Process(sender: sender, boot: stamp.boot)
        if let seen = latest[process] {
            guard stamp.sequence > seen.sequence else { return false }
            latest[process] = (stamp.sequence, max(seen.sentAt, stamp.sentAt))
        } else {
            latest[process] = (stamp.sequence, stamp.sentAt)
        }
        return true
    }

    private mutating func forgetOld(now: Int64) {
        // Wrapping arithmetic: a clock set absurdly far cannot trap here.
        guard now >= sweptAt.addingReportingOverflow(ClusterSigner.window).partialValue else { return }
        sweptAt = now
        let horizon = now.subtractingReportingOverflow(2 * ClusterSigner.window).partialValue
        latest = latest.filter { $0.value.sentAt >= horizon }
    }
}
