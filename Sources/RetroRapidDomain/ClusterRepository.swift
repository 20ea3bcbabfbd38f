import Foundation

/// Who holds what in a cluster of nodes on one database: each node's heartbeat
/// (`cluster_nodes`) and the node that runs each running game (`game_holders`). A single node on
/// SQLite without a bus never calls it.
///
/// A node refreshes its row every ``ClusterLease/heartbeat``; a node whose row is older than
/// ``ClusterLease/lease`` is taken for dead, and any node may then claim its games, which it
/// rebuilds from their last checkpoint (a game is a pure function of seed, level and input log).
/// Each rule is one conditional write, re-checked by the database under the row's lock, so two
/// nodes racing for a game or for one node id never both win (the implementations say how).
public protocol ClusterRepository {
    /// Every node registered now, by name, with its heartbeat and the games it holds: what the
    /// operator's console shows of a cluster. Empty for a single node, which never registers.
    func nodes() throws -> [ClusterNode]

    /// Registers this process (`instance`, unique per process) as `nodeID`. Refused with
    /// ``ClusterNodeInUseError`` while another process's row for that id is fresh (seen within
    /// `lease`): two processes with one node id would each think they hold the other's games.
    func join(nodeID: String, instance: String, now: Date, lease: TimeInterval) throws

    /// Refreshes the node's heartbeat. False when the row is no longer this process's (it was
    /// taken for dead and another process took the id): the caller must stop holding games.
    func heartbeat(nodeID: String, instance: String, now: Date) throws -> Bool

    /// Deletes the node's row (a graceful stop, after every game was stored).
    func leave(nodeID: String, instance: String) throws

    /// Marks every game `nodeID` holds as released, from `now`: what a restarted node does
    /// with the games its last run held, so any node may take them. Returns how many.
    @discardableResult
    func releaseAll(nodeID: String, now: Date) throws -> Int

    /// Takes `gameID` for `nodeID` if nobody holds it, its holder released it, its holder is
    /// `nodeID` already, or its holder's heartbeat is older than `lease`. One conditional write.
    func claim(gameID: String, nodeID: String, now: Date, lease: TimeInterval) throws -> GameClaim

    /// `nodeID` lets go of `gameID` (its log is checkpointed whole): false when it did not hold it.
    @discardableResult
    func release(gameID: String, nodeID: String, now: Date) throws -> Bool

    /// The games `nodeID` holds (not released). A node drops from memory the games it runs
    /// that are not here: another node took them after this one's heartbeat had lapsed.
    func heldGames(nodeID: String) throws -> Set<String>

    /// The holder of `gameID`, or nil when nobody holds it (or it is not running).
    func holder(gameID: String, now: Date, lease: TimeInterval) throws -> GameHolder?

    /// The running games no live node has held for `grace`: released that long ago, held by a
    /// node dead that long (heartbeat older than `lease + grace`), or never claimed since their
    /// start that long ago, oldest start first, with their players. The periodic sweep ends them
    /// as `server_crash`.
    func orphans(now: Date, lease: TimeInterval, grace: TimeInterval) throws -> [(gameID: String, playerID: Int64)]
}

/// How long a node's heartbeat stands for it.
public enum ClusterLease {
    /// Seconds between a node's heartbeats.
    public static let heartbeat: TimeInterval = 2
    /// A node not seen for this long is taken for dead: three heartbeats missed. Times are
    /// stored to the second, so the lease really ends between 6 and 7 s after the last one.
    public static let lease: TimeInterval = 3 * heartbeat
}

/// What ``ClusterRepository/claim(gameID:nodeID:now:lease:)`` found.
public enum GameClaim: Sendable, Equatable {
    /// The caller holds the game now.
    case claimed
    /// A live node holds it (`releasing` false) and its lease runs until `leaseEndsAt`.
    case held(GameHolder)
    /// The game is not running (stored meanwhile, or never begun).
    case notRunning
    /// The player already has another game held by some node: one game per player.
    case playerHasAnotherGame(gameID: String)
}

/// A row of `game_holders`, with what its node's heartbeat says.
public struct GameHolder: Sendable, Equatable {
    public var gameID: String
    public var playerID: Int64
    public var nodeID: String
    public var released: Bool
    /// When its node was last seen; nil when the node has no row (it stopped or never joined).
    public var nodeSeenAt: Date?
    /// Whether its node's heartbeat is within the lease.
    public var nodeAlive: Bool

    public init(gameID: String, playerID: Int64, nodeID: String, released: Bool, nodeSeenAt: Date?, nodeAlive: Bool) {
        self.gameID = gameID
        self.playerID = playerID
        self.nodeID = nodeID
        self.released = released
        self.nodeSeenAt = nodeSeenAt
        self.nodeAlive = nodeAlive
    }
}

/// `serve` refused: another process is node `nodeID` (its heartbeat is fresh).
public struct ClusterNodeInUseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let nodeID: String
    public let seenAt: Date

    public init(nodeID: String, seenAt: Date) {
        self.nodeID = nodeID
        self.seenAt = seenAt
    }

    public var description: String {
        "node id '\(nodeID)' is in use: a process with it was seen at \(UTCCivilTime.text(seenAt)) on this database. "
            + "Give each node its own --node-id; if that process has died, start again once \(Int(ClusterLease.lease)) seconds have passed since then."
    }
}

/// One node of a cluster as the database knows it.
public struct ClusterNode: Sendable, Equatable {
    public let nodeID: String
    public let startedAt: Date
    /// Its last heartbeat.
    public let seenAt: Date
    /// Running games it holds now (not released).
    public let gamesHeld: Int

    public init(nodeID: String, startedAt: Date, seenAt: Date, gamesHeld: Int) {
        self.nodeID = nodeID
        self.startedAt = startedAt
        self.seenAt = seenAt
        self.gamesHeld = gamesHeld
    }
}
