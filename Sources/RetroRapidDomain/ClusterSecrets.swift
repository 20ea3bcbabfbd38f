/// The secret the nodes of one cluster share (`--cluster-secret`), and during a rotation one
/// more that is accepted but never signs (`--cluster-secret-previous`). Every bus message is
/// signed with it (`ClusterSigner`), because any role that can connect to the database can
/// NOTIFY on the bus's channel: PostgreSQL has no privilege for LISTEN or NOTIFY.
///
/// The secret's text is the key, byte for byte (UTF-8); the configuration asks for at least
/// ``minimumLength`` printable characters, such as `openssl rand -base64 48` prints.
public struct ClusterSecrets: Sendable {
    /// Fewer bytes than this is refused: a secret a forger could guess or search through.
    public static let minimumLength = 32

    /// Signs every message this node sends; accepted from the other nodes.
    let current: [UInt8]
    /// Accepted from the other nodes, never used to sign: the old secret while a new one rolls
    /// out, or the new one before any node signs with it (docs/OPERATIONS.md, "Scale out").
    let previous: [UInt8]?

    /// Throws ``ClusterSecretsError`` for a secret shorter than ``minimumLength`` bytes or a
    /// previous secret equal to the current one; the error never repeats either secret.
    public init(current: String, previous: String? = nil) throws {
        guard current.utf8.count >= Self.minimumLength else {
            throw ClusterSecretsError.tooShort(setting: "cluster-secret", length: current.utf8.count)
        }
        if let previous {
            guard previous.utf8.count >= Self.minimumLength else {
                throw ClusterSecretsError.tooShort(setting: "cluster-secret-previous", length: previous.utf8.count)
            }
            guard previous != current else { throw ClusterSecretsError.previousIsCurrent }
        }
        self.current = Array(current.utf8)
        self.previous = previous.map { Array($0.utf8) }
    }
}

/// Why ``ClusterSecrets`` refused a secret (it names the setting, never the secret).
public enum ClusterSecretsError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(setting: String, length: Int)
    case previousIsCurrent

    public var description: String {
        switch self {
        case .tooShort(let setting, let length):
            return "\(setting) has \(length) bytes; a cluster secret needs at least \(ClusterSecrets.minimumLength) "
                + "(make one with `openssl rand -base64 48`)"
        case .previousIsCurrent:
            return "cluster-secret-previous is the same as cluster-secret; unset it, or set it to the other secret of a rotation"
        }
    }
}
