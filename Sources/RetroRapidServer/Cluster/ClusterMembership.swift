import Foundation
import RetroRapidDomain

/// What makes this server a node of a cluster: the bus to the other nodes, its name among
/// them (`--node-id`) and a name for this process, new each start (`cluster_nodes.instance`).
/// `GameServer` builds it when it is given a bus; a single node has none.
struct ClusterMembership: Sendable {
    let bus: any ClusterBus
    let nodeID: String
    let instance: String

    init(bus: any ClusterBus) {
        self.bus = bus
        nodeID = bus.nodeID
        instance = UUID().uuidString.lowercased()
    }
}
