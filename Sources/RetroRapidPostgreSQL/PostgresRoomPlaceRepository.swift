import Foundation
import RetroRapidDomain

/// Where each race room lives (`room_places`) on PostgreSQL. A place is one
/// `INSERT … ON CONFLICT (code) DO UPDATE … WHERE <the holder is me or dead>`: two nodes
/// placing one code at once, the second waits for the first's row lock and PostgreSQL re-checks
/// the WHERE against the row the first committed (a live node's now), so it changes nothing and
/// is told to draw another code: the rule of a game claim (``PostgresClusterRepository``).
/// Used from one thread at a time (a storage thread).
public struct PostgresRoomPlaceRepository: RoomPlaceRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    public func place(code: String, nodeID: String, now: Date, lease: TimeInterval) throws -> Bool {
        guard !code.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "code") }
        guard !nodeID.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "nodeID") }
        return try connection.execute("""
            INSERT INTO room_places (code, node_id, created_at) VALUES ($1, $2, $3)
            ON CONFLICT (code) DO UPDATE SET node_id = excluded.node_id, created_at = excluded.created_at
            WHERE room_places.node_id = excluded.node_id
               OR NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = room_places.node_id AND n.seen_at >= $4)
            """, [code, nodeID, UTCCivilTime.text(now), UTCCivilTime.text(now.addingTimeInterval(-lease))]).affectedRows == 1
    }

    public func place(ofCode code: String, now: Date, lease: TimeInterval) throws -> RoomPlace? {
        guard let row = try connection.execute("""
            SELECT r.code, r.node_id, r.created_at FROM room_places r JOIN cluster_nodes n ON n.node_id = r.node_id
            WHERE r.code = $1 AND n.seen_at >= $2
            """, [code, UTCCivilTime.text(now.addingTimeInterval(-lease))]).first else { return nil }
        return RoomPlace(code: row.string(at: 0), nodeID: row.string(at: 1),
                         createdAt: try UTCCivilTime.storedDate(row.string(at: 2), column: "room_places.created_at"))
    }

    @discardableResult
    public func remove(code: String, nodeID: String) throws -> Bool {
        try connection.execute("DELETE FROM room_places WHERE code = $1 AND node_id = $2", [code, nodeID]).affectedRows == 1
    }

    @discardableResult
    public func removeDead(now: Date, lease: TimeInterval) throws -> Int {
        try connection.execute("""
            DELETE FROM room_places r
            WHERE NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = r.node_id AND n.seen_at >= $1)
            """, [UTCCivilTime.text(now.addingTimeInterval(-lease))]).affectedRows
    }
}
