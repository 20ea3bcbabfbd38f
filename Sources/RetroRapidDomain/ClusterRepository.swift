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

    /// Registers this process (`instance`, unique per process) as `nodeID`, with the URL its
    /// game connections are reached at (nil: through the site's front) and its lease in whole
    /// seconds. Refused with ``ClusterNodeInUseError`` while another process's row for that id
    /// is fresh (seen within `lease`): two processes with one node id would each think they
    /// hold the other's games. Refused with ``ClusterLeaseMismatchError`` while a live node has
    /// another lease: each node judges the others dead by its own, so they must agree.
    func join(nodeID: String, instance: String, now: Date, lease: TimeInterval, gameURL: String?) throws

    /// The game connection URL of every registered node that has one, by node id: where a
    /// refusal naming a node sends the player.
    func gameURLs() throws -> [String: String]

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

/// How long a node's heartbeat stands for it (`--cluster-heartbeat-seconds`,
/// `--cluster-lease-seconds`).
public struct ClusterLease: Sendable, Equatable {
    /// Seconds between a node's heartbeats.
    public var heartbeat: TimeInterval
    /// A node not seen for this long is taken for dead: at least three heartbeats missed. Times
    /// are stored to the second, so the lease really ends up to a second after that.
    public var lease: TimeInterval

    public init(heartbeat: TimeInterval, lease: TimeInterval) {
        self.heartbeat = heartbeat
        self.lease = lease
    }

    /// The settings' defaults: a heartbeat every 2 s, dead after 6 s.
    public static let standard = ClusterLease(heartbeat: 2, lease: 6)
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
    /// The lease the refused process runs with.
    public let lease: TimeInterval

    public init(nodeID: String, seenAt: Date, lease: TimeInterval = ClusterLease.standard.lease) {
        self.nodeID = nodeID
        self.seenAt = seenAt
        self.lease = lease
    }

    public var description: String {
        "node id '\(nodeID)' is in use: a process with it was seen at \(UTCCivilTime.text(seenAt)) on this database. "
            + "Give each node its own --node-id; if that process has died, start again once \(Int(lease)) seconds have passed since then."
    }
}

/// `serve` refused: a live node of the cluster runs with another lease than this one.
public struct ClusterLeaseMismatchError: Error, Sendable, Equatable, CustomStringConvertible {
    public let nodeID: String
    public let theirs: Int
    public let mine: Int

    public init(nodeID: String, theirs: Int, mine: Int) {
        self.nodeID = nodeID
        self.theirs = theirs
        self.mine = mine
    }

    public var description: String {
        "node '\(nodeID)' runs with a lease of \(theirs) s and this one with \(mine) s: each node takes the others for dead "
            + "by its own lease, so every node needs the same --cluster-lease-seconds (and --cluster-heartbeat-seconds). "
            + "Change them on every node, one node at a time once none runs with the old ones, or stop them all first."
    }
}

extension ClusterRepository {
    /// Joins with no game connection URL of its own.
    public func join(nodeID: String, instance: String, now: Date, lease: TimeInterval) throws {
        try join(nodeID: nodeID, instance: instance, now: now, lease: lease, gameURL: nil)
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
    /// Where players reach its game connections, when not through the front.
    public let gameURL: String?

    public init(nodeID: String, startedAt: Date, seenAt: Date, gamesHeld: Int, gameURL: String? = nil) {
        self.nodeID = nodeID
        self.startedAt = startedAt
        self.seenAt = seenAt
        self.gamesHeld = gamesHeld
        self.gameURL = gameURL
    }
}
