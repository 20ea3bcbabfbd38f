import Foundation

/// Which node holds each race room in a cluster (`room_places`): a room lives on the node its
/// opener reached, and a join or watch that lands on another node is sent there. Written only
/// in cluster mode. A node's rows go when it leaves or a new process takes its id
/// (``ClusterRepository/leave(nodeID:instance:)``, ``ClusterRepository/join(nodeID:instance:now:lease:)``);
/// while its heartbeat is older than the lease its rooms are not found, and their codes may be
/// placed again.
public protocol RoomPlaceRepository {
    /// Places `code` on `nodeID`: true when it is placed there now; false when a live node
    /// holds the code already (draw another). A dead node's code (no heartbeat within `lease`)
    /// is taken over. One conditional write: two nodes placing one code at once, one wins.
    func place(code: String, nodeID: String, now: Date, lease: TimeInterval) throws -> Bool

    /// Where `code`'s room lives; nil when no live node holds it.
    func place(ofCode code: String, now: Date, lease: TimeInterval) throws -> RoomPlace?

    /// `nodeID` closes its room `code`: false when it did not hold it.
    @discardableResult
    func remove(code: String, nodeID: String) throws -> Bool

    /// Deletes the places of nodes not seen within `lease` (the periodic sweep); returns how many.
    @discardableResult
    func removeDead(now: Date, lease: TimeInterval) throws -> Int
}

/// A row of `room_places`.
public struct RoomPlace: Sendable, Equatable {
    public var code: String
    public var nodeID: String
    public var createdAt: Date

    public init(code: String, nodeID: String, createdAt: Date) {
        self.code = code
        self.nodeID = nodeID
        self.createdAt = createdAt
    }
}
