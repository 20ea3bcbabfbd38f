import Foundation
import RetroRapidDomain

/// The nodes of a cluster and the holder of each running game (`cluster_nodes`,
/// `game_holders`), on the database every node shares: PostgreSQL in a real cluster, SQLite
/// for two in-process nodes on one file in the tests.
///
/// How each rule stays exact with many nodes at once (on SQLite the one write lock serialises
/// every write, so the check and the write it guards see no other writer between them; on
/// PostgreSQL, at READ COMMITTED, the following do):
/// - A claim is one `INSERT … ON CONFLICT (game_id) DO UPDATE … WHERE <claimable>`. Two nodes
///   claiming at once: the second waits for the first's row lock, and PostgreSQL re-checks
///   the WHERE on the row the first committed (now held by a live node), so it changes nothing
///   and reports the holder. A node's own claim of its new game inserts the row.
/// - One game per player: `game_holders.player_id UNIQUE`. Two games of one player claimed at
///   once on two nodes: one insert commits, the other fails with a unique violation and is
///   answered ``GameClaim/playerHasAnotherGame(gameID:)``. (A racer for the same game can meet
///   the winner's uncommitted row on that index too, before ON CONFLICT sees it on game_id: it
///   tries again, and then sees the winner's row as any later claim does.)
/// - A join is one upsert whose `WHERE instance = mine OR seen_at < stale` is re-checked under
///   the row lock the same way, so two processes starting with one node id cannot both win.
/// - Release, heartbeat and leave are single-row UPDATEs/DELETEs guarded by the node id (and
///   the process's instance).
public struct SQLClusterRepository: ClusterRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    public func join(nodeID: String, instance: String, now: Date, lease: TimeInterval, gameURL: String?) throws {
        let at = UTCCivilTime.text(now)
        let leaseSeconds = Int64(lease.rounded())
        try executor.writeTransaction {
            // The row as it was, locked: the upsert below re-checks it under the same lock.
            let before = try executor.query("SELECT instance FROM cluster_nodes WHERE node_id = $1\(executor.dialect.lockingRead)",
                                            [nodeID]).first?.string("instance")
            try refuseAnotherLease(than: leaseSeconds, besides: nodeID, now: now)
            let joined = try executor.query("""
                INSERT INTO cluster_nodes (node_id, instance, started_at, seen_at, game_url, lease_seconds)
                VALUES ($1, $2, $3, $3, $5, $6)
                ON CONFLICT (node_id) DO UPDATE SET instance = excluded.instance, started_at = excluded.started_at,
                    seen_at = excluded.seen_at, game_url = excluded.game_url, lease_seconds = excluded.lease_seconds
                WHERE cluster_nodes.instance = excluded.instance OR cluster_nodes.seen_at < $4
                """, [nodeID, instance, at, Self.staleBefore(now, lease), gameURL.map(SQLValue.text) ?? .null, leaseSeconds])
            guard joined.affectedRows == 1 else {
                let seen = try executor.query("SELECT seen_at FROM cluster_nodes WHERE node_id = $1", [nodeID]).first?.string("seen_at")
                throw ClusterNodeInUseError(nodeID: nodeID, seenAt: seen.flatMap(UTCCivilTime.parse) ?? now, lease: lease)
            }
            // A new process under the id holds none of the rooms an earlier one placed.
            if before != instance {
                try executor.query("DELETE FROM room_places WHERE node_id = $1", [nodeID])
            }
        }
    }

    /// A live node (seen within its own lease) with another lease than `mine` refuses the join:
    /// read in full, since the nodes are few and each row's liveness is by its own lease.
    private func refuseAnotherLease(than mine: Int64, besides nodeID: String, now: Date) throws {
        for row in try executor.query("SELECT node_id, seen_at, lease_seconds FROM cluster_nodes WHERE node_id <> $1",
                                      [nodeID]).rows {
            let theirs = try row.int64("lease_seconds")
            guard theirs != mine else { continue }
            let seenAt = try UTCCivilTime.storedDate(row.string("seen_at"), column: "cluster_nodes.seen_at")
            // The CHECK keeps a stored lease within 2…120; a row outside it is not trusted to be alive.
            guard (2...120).contains(theirs), seenAt.addingTimeInterval(TimeInterval(theirs)) > now else { continue }
            throw ClusterLeaseMismatchError(nodeID: try row.string("node_id"), theirs: Int(theirs), mine: Int(mine))
        }
    }

    public func gameURLs() throws -> [String: String] {
        var urls: [String: String] = [:]
        for row in try executor.query("SELECT node_id, game_url FROM cluster_nodes WHERE game_url IS NOT NULL", []).rows {
            urls[try row.string("node_id")] = try row.string("game_url")
        }
        return urls
    }

    public func nodes() throws -> [ClusterNode] {
        try executor.query("""
            SELECT n.node_id AS node_id, n.started_at AS started_at, n.seen_at AS seen_at, n.game_url AS game_url,
                   (SELECT count(*) FROM game_holders h WHERE h.node_id = n.node_id AND NOT h.released) AS games
            FROM cluster_nodes n ORDER BY n.node_id
            """, []).rows.map { row in
            let games = try row.int64("games")
            guard games >= 0, games <= Int64(Int32.max) else { throw StoreError.unreadable("a node holds \(games) games") }
            return ClusterNode(nodeID: try row.string("node_id"),
                               startedAt: try UTCCivilTime.storedDate(row.string("started_at"), column: "cluster_nodes.started_at"),
                               seenAt: try UTCCivilTime.storedDate(row.string("seen_at"), column: "cluster_nodes.seen_at"),
                               gamesHeld: Int(games), gameURL: try row.optionalString("game_url"))
        }
    }

    public func heartbeat(nodeID: String, instance: String, now: Date) throws -> Bool {
        try executor.query("UPDATE cluster_nodes SET seen_at = $1 WHERE node_id = $2 AND instance = $3",
                           [UTCCivilTime.text(now), nodeID, instance]).affectedRows == 1
    }

    public func leave(nodeID: String, instance: String) throws {
        try executor.writeTransaction {
            // Its rooms close with it.
            if try executor.query("DELETE FROM cluster_nodes WHERE node_id = $1 AND instance = $2", [nodeID, instance]).affectedRows == 1 {
                try executor.query("DELETE FROM room_places WHERE node_id = $1", [nodeID])
            }
        }
    }

    @discardableResult
    public func releaseAll(nodeID: String, now: Date) throws -> Int {
        try executor.query("UPDATE game_holders SET released = TRUE, since = $1 WHERE node_id = $2 AND NOT released",
                           [UTCCivilTime.text(now), nodeID]).affectedRows
    }

    public func claim(gameID: String, nodeID: String, now: Date, lease: TimeInterval) throws -> GameClaim {
        // ON CONFLICT settles a race on game_id only: a racer whose insert meets another's
        // uncommitted row on player_id's unique index fails instead, so it tries again once
        // that row is committed, and then takes the ON CONFLICT path (or sees the other game).
        for attempt in 1...3 {
            do {
                return try claimOnce(gameID: gameID, nodeID: nodeID, now: now, lease: lease)
            } catch where executor.constraint(violatedBy: error) == .unique && attempt < 3 {
                continue
            } catch where executor.constraint(violatedBy: error) == .unique {
                // Another game of the player was claimed at the same moment (player_id UNIQUE).
                let other = try executor.query("""
                    SELECT h.game_id AS game_id FROM game_holders h JOIN running_games r ON r.player_id = h.player_id
                    WHERE r.public_id = $1 AND h.game_id <> $1
                    """, [gameID]).first?.string("game_id")
                return other.map { .playerHasAnotherGame(gameID: $0) } ?? .notRunning
            } catch where executor.constraint(violatedBy: error) == .foreignKey {
                return .notRunning  // the game was stored (its row deleted) between the read and the insert
            }
        }
        return .notRunning  // not reached: the last attempt returns or throws
    }

    private func claimOnce(gameID: String, nodeID: String, now: Date, lease: TimeInterval) throws -> GameClaim {
        try executor.writeTransaction {
            guard let player = try executor.query("SELECT player_id FROM running_games WHERE public_id = $1", [gameID]).first else {
                return .notRunning
            }
            let playerID = try player.int64("player_id")
            if let other = try executor.query("SELECT game_id FROM game_holders WHERE player_id = $1 AND game_id <> $2",
                                              [playerID, gameID]).first {
                return .playerHasAnotherGame(gameID: try other.string("game_id"))
            }
            let claimed = try executor.query("""
                INSERT INTO game_holders (game_id, player_id, node_id, released, since) VALUES ($1, $2, $3, FALSE, $4)
                ON CONFLICT (game_id) DO UPDATE SET node_id = excluded.node_id, released = FALSE, since = excluded.since
                WHERE game_holders.node_id = excluded.node_id OR game_holders.released
                   OR NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = game_holders.node_id AND n.seen_at >= $5)
                """, [gameID, playerID, nodeID, UTCCivilTime.text(now), Self.staleBefore(now, lease)])
            if claimed.affectedRows == 1 { return .claimed }
            guard let holder = try Self.holder(gameID, now: now, lease: lease, in: executor) else { return .notRunning }
            return .held(holder)
        }
    }

    @discardableResult
    public func release(gameID: String, nodeID: String, now: Date) throws -> Bool {
        try executor.query("UPDATE game_holders SET released = TRUE, since = $1 WHERE game_id = $2 AND node_id = $3",
                           [UTCCivilTime.text(now), gameID, nodeID]).affectedRows == 1
    }

    public func heldGames(nodeID: String) throws -> Set<String> {
        Set(try executor.query("SELECT game_id FROM game_holders WHERE node_id = $1 AND NOT released", [nodeID])
            .rows.map { try $0.string("game_id") })
    }

    public func holder(gameID: String, now: Date, lease: TimeInterval) throws -> GameHolder? {
        try Self.holder(gameID, now: now, lease: lease, in: executor)
    }

    public func orphans(now: Date, lease: TimeInterval, grace: TimeInterval) throws -> [(gameID: String, playerID: Int64)] {
        try executor.query("""
            SELECT r.public_id AS game_id, r.player_id AS player_id FROM running_games r
            LEFT JOIN game_holders h ON h.game_id = r.public_id
            LEFT JOIN cluster_nodes n ON n.node_id = h.node_id
            WHERE (h.game_id IS NULL AND r.started_at < $2)
               OR (h.released AND h.since < $1)
               OR (NOT h.released AND (n.node_id IS NULL OR n.seen_at < $2))
            ORDER BY r.started_at, r.public_id
            """, [UTCCivilTime.text(now.addingTimeInterval(-grace)), Self.staleBefore(now, lease + grace)])
            .rows.map { (gameID: try $0.string("game_id"), playerID: try $0.int64("player_id")) }
    }

    // MARK: - Private

    /// A heartbeat older than this (to the second, as stored) is a dead node's.
    static func staleBefore(_ now: Date, _ lease: TimeInterval) -> String {
        UTCCivilTime.text(now.addingTimeInterval(-lease))
    }

    private static func holder(_ gameID: String, now: Date, lease: TimeInterval, in db: any SQLExecutor) throws -> GameHolder? {
        let stale = staleBefore(now, lease)
        guard let row = try db.query("""
            SELECT h.game_id AS game_id, h.player_id AS player_id, h.node_id AS node_id, h.released AS released,
                   n.seen_at AS seen_at
            FROM game_holders h LEFT JOIN cluster_nodes n ON n.node_id = h.node_id WHERE h.game_id = $1
            """, [gameID]).first else { return nil }
        let seen = try row.optionalString("seen_at")
        return GameHolder(gameID: try row.string("game_id"), playerID: try row.int64("player_id"), nodeID: try row.string("node_id"),
                          released: try row.bool("released"), nodeSeenAt: seen.flatMap(UTCCivilTime.parse),
                          nodeAlive: seen.map { $0 >= stale } ?? false)
    }
}
