import Foundation
import RetroRapidDomain

/// What makes this server a node of a cluster: the bus to the other nodes, its name among
/// them (`--node-id`), a name for this process, new each start (`cluster_nodes.instance`), its
/// heartbeat and lease, and where players reach its game connections straight (`--game-url`).
/// `GameServer` builds it when it is given a bus; a single node has none.
struct ClusterMembership: Sendable {
    let bus: any ClusterBus
    let nodeID: String
    let instance: String
    let lease: ClusterLease
    let gameURL: String?
    /// The other nodes' game URLs, refreshed with each heartbeat.
    let directory = NodeDirectory()

    init(bus: any ClusterBus, lease: ClusterLease = .standard, gameURL: String? = nil) {
        self.bus = bus
        nodeID = bus.nodeID
        instance = UUID().uuidString.lowercased()
        self.lease = lease
        self.gameURL = gameURL
    }
}
