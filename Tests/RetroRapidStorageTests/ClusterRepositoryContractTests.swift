import Foundation
import RetroRapidDomain
import RetroRapidRules
import RetroRapidStorageFixtures
import Testing

/// The contract of `ClusterRepository` (nodes' heartbeats, who holds each running game), run
/// against every backend in `StorageBackends.all`.
@Suite struct ClusterRepositoryContractTests {
    let start = utc("2026-01-15T10:00:00Z")
    let lease = ClusterLease.standard.lease

    func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test(arguments: StorageBackends.all) func aSecondProcessWithALiveNodesIDIsRefusedUntilItsLeaseEnds(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let cluster = store.repositories().cluster
            try cluster.join(nodeID: "a", instance: "first", now: start, lease: lease)
            let refused = #expect(throws: ClusterNodeInUseError.self) {
                try cluster.join(nodeID: "a", instance: "second", now: at(5), lease: lease)
            }
            #expect(refused?.nodeID == "a" && refused?.description.contains("--node-id") == true)
            // The same process may join again, and another node id is free.
            try cluster.join(nodeID: "a", instance: "first", now: at(5), lease: lease)
            try cluster.join(nodeID: "b", instance: "other", now: at(5), lease: lease)
            // First seen at 5 s: past the lease the id may be taken, and the old process hears so.
            try cluster.join(nodeID: "a", instance: "second", now: at(5 + lease + 1), lease: lease)
            #expect(try cluster.heartbeat(nodeID: "a", instance: "first", now: at(13)) == false)
            #expect(try cluster.heartbeat(nodeID: "a", instance: "second", now: at(13)) == true)
            // After a graceful leave the id is free at once.
            try cluster.leave(nodeID: "a", instance: "second")
            try cluster.join(nodeID: "a", instance: "third", now: at(14), lease: lease)
        }
    }

    @Test(arguments: StorageBackends.all) func eachNodesGameURLIsKnownToTheOthersAndGoesWithItsRow(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let cluster = store.repositories().cluster
            #expect(try cluster.gameURLs().isEmpty)
            try cluster.join(nodeID: "a", instance: "ia", now: start, lease: lease, gameURL: "wss://a.play.example.com/ws")
            try cluster.join(nodeID: "b", instance: "ib", now: start, lease: lease)
            #expect(try cluster.gameURLs() == ["a": "wss://a.play.example.com/ws"])
            #expect(try cluster.nodes().map(\.gameURL) == ["wss://a.play.example.com/ws", nil])
            // A restart with another URL (or none) replaces it; a graceful leave removes it.
            try cluster.join(nodeID: "b", instance: "ib2", now: at(lease + 1), lease: lease, gameURL: "wss://b.play.example.com:8443/ws")
            try cluster.join(nodeID: "a", instance: "ia", now: at(lease + 1), lease: lease)
            #expect(try cluster.gameURLs() == ["b": "wss://b.play.example.com:8443/ws"])
            try cluster.leave(nodeID: "b", instance: "ib2")
            #expect(try cluster.gameURLs().isEmpty)
        }
    }

    @Test(arguments: StorageBackends.all) func aNodeWithAnotherLeaseThanALiveNodeIsRefusedAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let cluster = store.repositories().cluster
            try cluster.join(nodeID: "a", instance: "ia", now: start, lease: 6)
            let refused = #expect(throws: ClusterLeaseMismatchError.self) {
                try cluster.join(nodeID: "b", instance: "ib", now: at(2), lease: 10, gameURL: "wss://b.play.example.com/ws")
            }
            #expect(refused == ClusterLeaseMismatchError(nodeID: "a", theirs: 6, mine: 10))
            #expect(refused?.description.contains("--cluster-lease-seconds") == true)
            #expect(try cluster.nodes().map(\.nodeID) == ["a"] && cluster.gameURLs().isEmpty)
            // The same lease joins; a restart of a itself may change its own.
            try cluster.join(nodeID: "b", instance: "ib", now: at(2), lease: 6)
            try cluster.leave(nodeID: "b", instance: "ib")
            try cluster.join(nodeID: "a", instance: "ia", now: at(3), lease: 10)
            // Once a's heartbeat is older than its own lease (10 s), another lease may join.
            #expect(throws: ClusterLeaseMismatchError.self) { try cluster.join(nodeID: "c", instance: "ic", now: at(12), lease: 6) }
            try cluster.join(nodeID: "c", instance: "ic", now: at(14), lease: 6)
        }
    }

    @Test(arguments: StorageBackends.all) func aGameIsClaimedOnlyFromNobodyAReleaseOrADeadHolder(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let cluster = repositories.cluster
            try beginRunningGame(repositories.runningGames, "00000000000000aa", player: player, at: start)
            try cluster.join(nodeID: "a", instance: "ia", now: start, lease: lease)
            try cluster.join(nodeID: "b", instance: "ib", now: start, lease: lease)
            #expect(try cluster.claim(gameID: "00000000000000aa", nodeID: "a", now: start, lease: lease) == .claimed)
            #expect(try cluster.claim(gameID: "00000000000000aa", nodeID: "a", now: at(1), lease: lease) == .claimed)
            guard case .held(let holder) = try cluster.claim(gameID: "00000000000000aa", nodeID: "b", now: at(2), lease: lease) else {
                Issue.record("b took a game a live node holds"); return
            }
            #expect(holder.nodeID == "a" && holder.nodeAlive && !holder.released && holder.playerID == player)
            // Released: b may take it.
            #expect(try cluster.release(gameID: "00000000000000aa", nodeID: "b", now: at(2)) == false)
            #expect(try cluster.release(gameID: "00000000000000aa", nodeID: "a", now: at(3)) == true)
            #expect(try cluster.holder(gameID: "00000000000000aa", now: at(3), lease: lease)?.released == true)
            #expect(try cluster.claim(gameID: "00000000000000aa", nodeID: "b", now: at(3), lease: lease) == .claimed)
            // b's heartbeat stops at 0 s (its join): dead after the lease, and a takes it back.
            guard case .held = try cluster.claim(gameID: "00000000000000aa", nodeID: "a", now: at(lease - 1), lease: lease) else {
                Issue.record("a took the game while b's lease ran"); return
            }
            _ = try cluster.heartbeat(nodeID: "a", instance: "ia", now: at(lease + 1))
            #expect(try cluster.holder(gameID: "00000000000000aa", now: at(lease + 1), lease: lease)?.nodeAlive == false)
            #expect(try cluster.heldGames(nodeID: "b") == ["00000000000000aa"])
            #expect(try cluster.claim(gameID: "00000000000000aa", nodeID: "a", now: at(lease + 1), lease: lease) == .claimed)
            #expect(try cluster.heldGames(nodeID: "b") == [] && cluster.heldGames(nodeID: "a") == ["00000000000000aa"])
            #expect(try cluster.claim(gameID: "00000000000000ff", nodeID: "a", now: at(lease + 1), lease: lease) == .notRunning)
        }
    }

    @Test(arguments: StorageBackends.all) func aPlayerHoldsOneGameAndTheHolderGoesWithItsGame(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repositories = store.repositories()
            let cluster = repositories.cluster
            try repositories.entitlements.grantUnlimited(playerID: player, source: .operator, reference: "test", now: start)
            try beginRunningGame(repositories.runningGames, "00000000000000aa", player: player, at: start)
            try beginRunningGame(repositories.runningGames, "00000000000000bb", player: player, at: start)
            try cluster.join(nodeID: "a", instance: "ia", now: start, lease: lease)
            #expect(try cluster.claim(gameID: "00000000000000aa", nodeID: "a", now: start, lease: lease) == .claimed)
            #expect(try cluster.claim(gameID: "00000000000000bb", nodeID: "b", now: start, lease: lease)
                    == .playerHasAnotherGame(gameID: "00000000000000aa"))
            // Stored: the holder row goes with the running game, and the player may hold another.
            try repositories.games.record(NewGame(
                publicID: "00000000000000aa", playerID: player, level: .fast, seed: 7, inputLog: InputLog(), score: 0, steps: 0,
                endReason: .abandoned, startedAt: start, endedAt: at(1), durationMilliseconds: 0))
            #expect(try cluster.holder(gameID: "00000000000000aa", now: at(1), lease: lease) == nil)
            #expect(try cluster.claim(gameID: "00000000000000bb", nodeID: "a", now: at(1), lease: lease) == .claimed)
        }
    }

    @Test(arguments: StorageBackends.all) func orphansAreGamesNoLiveNodeHasHeldForTheGrace(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let cluster = repositories.cluster
            var players: [Int64] = []
            for (index, id) in ["00000000000000a1", "00000000000000a2", "00000000000000a3", "00000000000000a4"].enumerated() {
                players.append(try store.addPlayer("p-\(index)"))
                try beginRunningGame(repositories.runningGames, id, player: players[index], practice: true, at: start)
            }
            try cluster.join(nodeID: "live", instance: "i1", now: start, lease: lease)
            try cluster.join(nodeID: "dead", instance: "i2", now: start, lease: lease)
            #expect(try cluster.claim(gameID: "00000000000000a1", nodeID: "live", now: start, lease: lease) == .claimed)
            #expect(try cluster.claim(gameID: "00000000000000a2", nodeID: "dead", now: start, lease: lease) == .claimed)
            #expect(try cluster.claim(gameID: "00000000000000a3", nodeID: "live", now: start, lease: lease) == .claimed)
            #expect(try cluster.releaseAll(nodeID: "live", now: at(30)) == 2)
            #expect(try cluster.claim(gameID: "00000000000000a1", nodeID: "live", now: at(30), lease: lease) == .claimed)
            // a4 never claimed (its node died between its start and its claim).
            let grace: TimeInterval = 60
            _ = try cluster.heartbeat(nodeID: "live", instance: "i1", now: at(60))
            #expect(try cluster.orphans(now: at(60), lease: lease, grace: grace).isEmpty)
            _ = try cluster.heartbeat(nodeID: "live", instance: "i1", now: at(95))
            // dead: last seen at 0, lease + grace ago from 67 s; a3 released at 30, the grace ago from 91 s; a4 from 67 s.
            let orphans = try cluster.orphans(now: at(95), lease: lease, grace: grace)
            #expect(orphans.map(\.gameID) == ["00000000000000a2", "00000000000000a3", "00000000000000a4"])
            #expect(orphans.map(\.playerID) == Array(players[1...3]))
        }
    }
}
