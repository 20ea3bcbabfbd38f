import Foundation
import RetroRapidDomain

/// What this process is to the others: a node alone, or one node of a cluster, with its id.
/// Known from the start (`ServerComponentContext.membership`) and asked this one way wherever
/// behaviour differs (a practice start is stored only in a cluster, refusals and `welcome`
/// name the node), so no code infers cluster mode from whether some helper object exists.
enum NodeRole: Sendable, Equatable {
    case single
    case cluster(nodeID: String, lease: TimeInterval)

    init(_ membership: ClusterMembership?) {
        self = membership.map { .cluster(nodeID: $0.nodeID, lease: $0.lease.lease) } ?? .single
    }

    /// The node's id in a cluster; nil alone (messages then carry no `node`).
    var nodeID: String? {
        if case .cluster(let nodeID, _) = self { return nodeID }
        return nil
    }

    /// How long a node's heartbeat stands for it: how the database's rows of other nodes are
    /// judged. Asked only in a cluster (alone, the default).
    var lease: TimeInterval {
        if case .cluster(_, let lease) = self { return lease }
        return ClusterLease.standard.lease
    }

    var isCluster: Bool { nodeID != nil }
}
