/// What makes one signed bus message unique and dated: the sending process (`boot`, random at
/// each start of its bus), its place in that process's messages (`sequence`, from 1, one more
/// per message) and when it was sent (`sentAt`, milliseconds since 1970 on the sender's clock).
/// `ClusterSigner` signs it with the message; `ClusterReplayGuard` uses it to refuse a copy.
public struct ClusterStamp: Sendable, Hashable {
    public let boot: UInt64
    public let sequence: UInt64
    public let sentAt: Int64

    public init(boot: UInt64, sequence: UInt64, sentAt: Int64) {
        self.boot = boot
        self.sequence = sequence
        self.sentAt = sentAt
    }

    /// The latest `sentAt` a payload may carry: the last millisecond of the year 9999. Bounding
    /// it keeps every difference of two times far from Int64's limits.
    public static let latestTime: Int64 = 253_402_300_799_999
}
