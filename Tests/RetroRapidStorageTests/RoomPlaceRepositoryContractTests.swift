import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `RoomPlaceRepository` (and what `ClusterRepository` does to a node's rooms),
/// run against every backend in `StorageBackends.all`.
@Suite struct RoomPlaceRepositoryContractTests {
    let now = utc("2026-12-01T10:00:00Z")
    let lease = ClusterLease.standard.lease

    @Test(arguments: StorageBackends.all) func aCodeLivesOnOneLiveNode(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let (places, cluster) = (repositories.roomPlaces, repositories.cluster)
            try cluster.join(nodeID: "a", instance: "a-1", now: now, lease: lease)
            try cluster.join(nodeID: "b", instance: "b-1", now: now, lease: lease)
            #expect(try places.place(code: "K7QXM2", nodeID: "a", now: now, lease: lease))
            #expect(try !places.place(code: "K7QXM2", nodeID: "b", now: now, lease: lease))
            #expect(try places.place(ofCode: "K7QXM2", now: now, lease: lease) == RoomPlace(code: "K7QXM2", nodeID: "a", createdAt: now))
            #expect(try places.place(ofCode: "ZZZZZZ", now: now, lease: lease) == nil)
            #expect(try !places.remove(code: "K7QXM2", nodeID: "b"))
            #expect(try places.remove(code: "K7QXM2", nodeID: "a"))
            #expect(try places.place(ofCode: "K7QXM2", now: now, lease: lease) == nil)
            #expect(throws: StoreError.self) { try places.place(code: "", nodeID: "a", now: now, lease: lease) }
        }
    }

    @Test(arguments: StorageBackends.all) func aNodesRoomsGoWithIt(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let (places, cluster) = (repositories.roomPlaces, repositories.cluster)
            try cluster.join(nodeID: "a", instance: "a-1", now: now, lease: lease)
            try cluster.join(nodeID: "b", instance: "b-1", now: now, lease: lease)
            #expect(try places.place(code: "AAAAA1", nodeID: "a", now: now, lease: lease))
            #expect(try places.place(code: "AAAAA2", nodeID: "a", now: now, lease: lease))
            #expect(try places.place(code: "BBBBB1", nodeID: "b", now: now, lease: lease))
            // A leaves: its rooms go, B's stay.
            try cluster.leave(nodeID: "a", instance: "a-1")
            #expect(try places.place(ofCode: "AAAAA1", now: now, lease: lease) == nil)
            #expect(try places.place(ofCode: "BBBBB1", now: now, lease: lease)?.nodeID == "b")
            // B's heartbeat lapses: its rooms are not found and another node may take the code.
            let later = now.addingTimeInterval(lease + 5)
            try cluster.join(nodeID: "a", instance: "a-2", now: later, lease: lease)
            #expect(try places.place(ofCode: "BBBBB1", now: later, lease: lease) == nil)
            #expect(try places.place(code: "BBBBB1", nodeID: "a", now: later, lease: lease))
            #expect(try places.place(code: "BBBBB2", nodeID: "b", now: now, lease: lease))
            #expect(try places.removeDead(now: later, lease: lease) == 1)
            #expect(try places.place(ofCode: "BBBBB1", now: later, lease: lease)?.nodeID == "a")
            // A new process under A's id holds none of the earlier one's rooms; a heartbeat keeps them.
            #expect(try cluster.heartbeat(nodeID: "a", instance: "a-2", now: later))
            #expect(try places.place(ofCode: "BBBBB1", now: later, lease: lease)?.nodeID == "a")
            let muchLater = later.addingTimeInterval(lease + 5)
            try cluster.join(nodeID: "a", instance: "a-3", now: muchLater, lease: lease)
            #expect(try places.place(ofCode: "BBBBB1", now: muchLater, lease: lease) == nil)
            #expect(try places.removeDead(now: muchLater, lease: lease) == 0)
        }
    }
}
