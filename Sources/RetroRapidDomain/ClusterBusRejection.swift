/// Why the bus dropped a notification before any handler saw it (`ClusterSigner.open`,
/// `ClusterReplayGuard`); the `reason` label of `retrorapid_cluster_bus_rejected_total`.
public enum ClusterBusRejection: String, Error, Sendable, CaseIterable {
    /// Not in the signed form at all: a payload an older build or a stranger wrote.
    case unsigned
    /// Signed, but with neither secret this node holds, or changed after it was signed.
    case badSignature = "bad_signature"
    /// Signed, but its time is more than ``ClusterSigner/window`` from this node's clock: a
    /// replay, or a node whose clock is wrong.
    case stale
    /// Signed and recent, but this node has already taken it (or a later one from the same
    /// sender process): a copy sent again.
    case replayed
    /// Signed with our secret, but its stamp is not numbers in range: a bug in the sender.
    case malformed

    /// For the log line: what the operator should suspect.
    public var explanation: String {
        switch self {
        case .unsigned: "it is not signed (a role without the cluster secret, or a node of an older build)"
        case .badSignature: "its signature is wrong (another cluster secret, or a forgery)"
        case .stale: "it is older or newer than the replay window (a replay, or a node whose clock is wrong)"
        case .replayed: "it was already received (a replay)"
        case .malformed: "its stamp is not valid numbers"
        }
    }
}
