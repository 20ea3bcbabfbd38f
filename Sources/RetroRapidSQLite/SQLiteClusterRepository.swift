import Foundation
import RetroRapidDomain

/// The nodes of a cluster and the holder of each running game (`cluster_nodes`,
/// `game_holders`) on SQLite: what two in-process nodes on one file use in the tests; a real
/// cluster runs on PostgreSQL (`PostgresClusterRepository`).
///
/// How each rule is atomic: every write runs in an IMMEDIATE transaction, which takes SQLite's
/// one write lock before it reads, so the check and the write it guards see no other writer
/// between them. A claim is one `INSERT … ON CONFLICT (game_id) DO UPDATE … WHERE <claimable>`;
/// `game_holders.player_id UNIQUE` keeps a player to one held game; a join is one upsert whose
/// `WHERE seen_at < stale` refuses a fresh row.
///
/// Like its ``Database``, a repository is used from one thread at a time (the storage thread).
public struct SQLiteClusterRepository: ClusterRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }

    public func join(nodeID: String, instance: String, now: Date, lease: TimeInterval) throws {
        let at = UTCCivilTime.text(now)
        try database.transaction(.immediate) { db in
            let before = try statements.prepare("SELECT instance FROM cluster_nodes WHERE node_id = ?").query([nodeID]) { $0.string(at: 0) }.first
            try statements.prepare("""
                INSERT INTO cluster_nodes (node_id, instance, started_at, seen_at) VALUES (?1, ?2, ?3, ?3)
                ON CONFLICT (node_id) DO UPDATE SET instance = excluded.instance, started_at = excluded.started_at,
                    seen_at = excluded.seen_at
                WHERE cluster_nodes.instance = excluded.instance OR cluster_nodes.seen_at < ?4
                """).execute([nodeID, instance, at, Self.staleBefore(now, lease)])
            guard db.changes == 1 else {
                let seen = try statements.prepare("SELECT seen_at FROM cluster_nodes WHERE node_id = ?").query([nodeID]) { $0.string(at: 0) }
                throw ClusterNodeInUseError(nodeID: nodeID, seenAt: seen.first.flatMap(UTCCivilTime.parse) ?? now)
            }
            // A new process under the id holds none of the rooms an earlier one placed.
            if before != instance {
                try statements.prepare("DELETE FROM room_places WHERE node_id = ?").execute([nodeID])
            }
        }
    }

    public func heartbeat(nodeID: String, instance: String, now: Date) throws -> Bool {
        try database.transaction(.immediate) { db in
            try statements.prepare("UPDATE cluster_nodes SET seen_at = ? WHERE node_id = ? AND instance = ?")
                .execute([UTCCivilTime.text(now), nodeID, instance])
            return db.changes == 1
        }
    }

    public func leave(nodeID: String, instance: String) throws {
        try database.transaction(.immediate) { db in
            try statements.prepare("DELETE FROM cluster_nodes WHERE node_id = ? AND instance = ?").execute([nodeID, instance])
            // Its rooms close with it.
            if db.changes == 1 {
                try statements.prepare("DELETE FROM room_places WHERE node_id = ?").execute([nodeID])
            }
        }
    }

    @discardableResult
    public func releaseAll(nodeID: String, now: Date) throws -> Int {
        try database.transaction(.immediate) { db in
            try statements.prepare("UPDATE game_holders SET released = 1, since = ? WHERE node_id = ? AND released = 0")
                .execute([UTCCivilTime.text(now), nodeID])
            return db.changes
        }
    }

    public func claim(gameID: String, nodeID: String, now: Date, lease: TimeInterval) throws -> GameClaim {
        try database.transaction(.immediate) { db in
            let players = try statements.prepare("SELECT player_id FROM running_games WHERE public_id = ?").query([gameID]) { $0.int64(at: 0) }
            guard let playerID = players.first else { return .notRunning }
            let other = try statements.prepare("SELECT game_id FROM game_holders WHERE player_id = ? AND game_id <> ?")
                .query([playerID, gameID]) { $0.string(at: 0) }
            if let other = other.first { return .playerHasAnotherGame(gameID: other) }
            try statements.prepare("""
                INSERT INTO game_holders (game_id, player_id, node_id, released, since) VALUES (?1, ?2, ?3, 0, ?4)
                ON CONFLICT (game_id) DO UPDATE SET node_id = excluded.node_id, released = 0, since = excluded.since
                WHERE game_holders.node_id = excluded.node_id OR game_holders.released = 1
                   OR NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = game_holders.node_id AND n.seen_at >= ?5)
                """).execute([gameID, playerID, nodeID, UTCCivilTime.text(now), Self.staleBefore(now, lease)])
            if db.changes == 1 { return .claimed }
            guard let holder = try holder(gameID, now: now, lease: lease) else { return .notRunning }
            return .held(holder)
        }
    }

    @discardableResult
    public func release(gameID: String, nodeID: String, now: Date) throws -> Bool {
        try database.transaction(.immediate) { db in
            try statements.prepare("UPDATE game_holders SET released = 1, since = ? WHERE game_id = ? AND node_id = ?")
                .execute([UTCCivilTime.text(now), gameID, nodeID])
            return db.changes == 1
        }
    }

    public func heldGames(nodeID: String) throws -> Set<String> {
        try database.transaction(.deferred) { _ in
            Set(try statements.prepare("SELECT game_id FROM game_holders WHERE node_id = ? AND released = 0")
                .query([nodeID]) { $0.string(at: 0) })
        }
    }

    public func holder(gameID: String, now: Date, lease: TimeInterval) throws -> GameHolder? {
        try database.transaction(.deferred) { _ in try holder(gameID, now: now, lease: lease) }
    }

    public func orphans(now: Date, lease: TimeInterval, grace: TimeInterval) throws -> [(gameID: String, playerID: Int64)] {
        try database.transaction(.deferred) { _ in
            try statements.prepare("""
                SELECT r.public_id, r.player_id FROM running_games r
                LEFT JOIN game_holders h ON h.game_id = r.public_id
                LEFT JOIN cluster_nodes n ON n.node_id = h.node_id
                WHERE (h.game_id IS NULL AND r.started_at < ?2)
                   OR (h.released = 1 AND h.since < ?1)
                   OR (h.released = 0 AND (n.node_id IS NULL OR n.seen_at < ?2))
                ORDER BY r.started_at, r.public_id
                """).query([UTCCivilTime.text(now.addingTimeInterval(-grace)), Self.staleBefore(now, lease + grace)]) {
                (gameID: $0.string(at: 0), playerID: $0.int64(at: 1))
            }
        }
    }

    // MARK: - Private

    /// A heartbeat older than this (to the second, as stored) is a dead node's.
    static func staleBefore(_ now: Date, _ lease: TimeInterval) -> String {
        UTCCivilTime.text(now.addingTimeInterval(-lease))
    }

    private func holder(_ gameID: String, now: Date, lease: TimeInterval) throws -> GameHolder? {
        let stale = Self.staleBefore(now, lease)
        return try statements.prepare("""
            SELECT h.game_id, h.player_id, h.node_id, h.released, n.seen_at FROM game_holders h
            LEFT JOIN cluster_nodes n ON n.node_id = h.node_id WHERE h.game_id = ?
            """).query([gameID]) { row in
            let seen = row.isNull(at: 4) ? nil : row.string(at: 4)
            return GameHolder(gameID: row.string(at: 0), playerID: row.int64(at: 1), nodeID: row.string(at: 2),
                              released: row.bool(at: 3), nodeSeenAt: seen.flatMap(UTCCivilTime.parse),
                              nodeAlive: seen.map { $0 >= stale } ?? false)
        }.first
    }
}
