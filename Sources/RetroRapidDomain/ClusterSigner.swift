/// Signs what a node sends on the cluster bus and checks what it receives, so that only a
/// holder of the cluster secret can make a node act (close a device's connections, let go of a
/// game, push settings). Any database role may NOTIFY on the bus's channel, so the channel
/// itself proves nothing.
///
/// A signed payload is `s1|MAC|sender|sentAt|boot|sequence|kind|field…`: the version of this
/// form, then HMAC-SHA256 (64 hex digits) of everything after it under the cluster secret,
/// with the channel's name mixed in (a message cannot be moved to another channel); then the
/// sender's node id, its ``ClusterStamp`` (milliseconds since 1970, the sending process's
/// random 16-hex-digit boot id, its sequence number) and the message (`ClusterMessage.encoded`).
/// About 100 bytes plus the sender's name (up to 64) and the message: far below NOTIFY's 8,000.
///
/// `open` checks the form, then the signature (current secret, then previous), then the
/// stamp's numbers and time; whether it was already received is `ClusterReplayGuard`'s job,
/// which remembers what came. A value type without state: any thread.
public struct ClusterSigner: Sendable {
    /// How far a message's time may be from the receiver's clock, either way, in milliseconds:
    /// a signed message replayed later than this is `stale`. The nodes' clocks must agree to
    /// well within it (NTP).
    public static let window: Int64 = 60_000
    /// The first field of a signed payload.
    public static let version = "s1"
    /// What is longer than this (NOTIFY's limit) is not a payload PostgreSQL could carry.
    public static let maximumPayloadBytes = 8000

    /// A payload whose signature is right and whose time is within the window.
    public struct Opened: Sendable, Equatable {
        public let sender: String
        public let stamp: ClusterStamp
        /// `kind|field…`, not parsed yet (a newer node's kind is signed too, and ignored later).
        public let body: String
        /// Signed with the previous secret, not the current one: some node has not rotated yet.
        public let signedWithPrevious: Bool

        /// The message, or nil for one this build does not know.
        public var envelope: ClusterEnvelope? { ClusterEnvelope(encoded: sender + "|" + body) }
    }

    private let secrets: ClusterSecrets
    private let channel: String

    /// A signer for the bus on `channel` (its name is part of what is signed).
    public init(secrets: ClusterSecrets, channel: String) {
        self.secrets = secrets
        self.channel = channel
    }

    /// The payload to NOTIFY for `envelope`, stamped `stamp`, signed with the current secret.
    public func seal(_ envelope: ClusterEnvelope, stamp: ClusterStamp) -> String {
        let signed = "\(envelope.sender)|\(stamp.sentAt)|\(Self.hex(stamp.boot))|\(stamp.sequence)|\(envelope.message.encoded)"
        let code = authenticationCode(signed, key: secrets.current)
        return "\(Self.version)|\(Self.hex(code))|\(signed)"
    }

    /// The payload's sender, stamp and message if it is signed with one of our secrets and its
    /// time is within ``window`` of `now` (milliseconds since 1970); else why not. Every number
    /// is parsed with a failable initializer and bounded: no payload can trap.
    public func open(_ payload: String, now: Int64) -> Result<Opened, ClusterBusRejection> {
        guard payload.utf8.count <= Self.maximumPayloadBytes else { return .failure(.unsigned) }
        // `s1|` + 64 hex digits + `|`, then the signed text.
        let prefix = Self.version + "|"
        guard payload.hasPrefix(prefix) else { return .failure(.unsigned) }
        let afterVersion = payload.utf8.dropFirst(prefix.utf8.count)
        guard afterVersion.count > 65, afterVersion.dropFirst(64).first == UInt8(ascii: "|"),
              let code = HMACSHA256.bytes(hex: String(decoding: afterVersion.prefix(64), as: UTF8.self)) else {
            return .failure(.unsigned)
        }
        let signed = String(decoding: afterVersion.dropFirst(65), as: UTF8.self)
        // Both codes are computed whichever matches, so the time taken does not say which.
        let current = HMACSHA256.constantTimeEquals(code, authenticationCode(signed, key: secrets.current))
        let previous = secrets.previous.map { HMACSHA256.constantTimeEquals(code, authenticationCode(signed, key: $0)) } ?? false
        guard current || previous else { return .failure(.badSignature) }

        let fields = signed.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, !fields[0].isEmpty,
              let sentAt = Int64(fields[1]), (0...ClusterStamp.latestTime).contains(sentAt),
              fields[2].utf8.count == 16, let boot = UInt64(fields[2], radix: 16),
              let sequence = UInt64(fields[3]), sequence > 0 else {
            return .failure(.malformed)
        }
        let (difference, overflow) = now.subtractingReportingOverflow(sentAt)
        guard !overflow, difference.magnitude <= Self.window.magnitude else { return .failure(.stale) }
        return .success(Opened(sender: String(fields[0]), stamp: ClusterStamp(boot: boot, sequence: sequence, sentAt: sentAt),
                               body: String(fields[4]), signedWithPrevious: !current))
    }

    private func authenticationCode(_ signed: String, key: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(for: Array("retrorapid-cluster|\(channel)|".utf8) + Array(signed.utf8), key: key)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// 16 hex digits, zero-padded: a fixed width the receiver checks.
    private static func hex(_ value: UInt64) -> String {
        hex((0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) })
    }
}
