import Foundation
import RetroRapidDomain

/// Where each race room lives (`room_places`), on either backend (on SQLite, what two
/// in-process nodes on one file use in the tests). A place is one
/// `INSERT … ON CONFLICT (code) DO UPDATE … WHERE <the holder is me or dead>`, the rule of a
/// game claim: two nodes placing one code at once, the second waits for the first's write
/// (PostgreSQL: its row lock, after which the WHERE is checked again against the row the first
/// committed, a live node's now; SQLite: the one write lock), so it changes nothing and is
/// told to draw another code. Each method is one statement, atomic on its own.
public struct SQLRoomPlaceRepository: RoomPlaceRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    public func place(code: String, nodeID: String, now: Date, lease: TimeInterval) throws -> Bool {
        guard !code.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "code") }
        guard !nodeID.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "nodeID") }
        return try executor.query("""
            INSERT INTO room_places (code, node_id, created_at) VALUES ($1, $2, $3)
            ON CONFLICT (code) DO UPDATE SET node_id = excluded.node_id, created_at = excluded.created_at
            WHERE room_places.node_id = excluded.node_id
               OR NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = room_places.node_id AND n.seen_at >= $4)
            """, [code, nodeID, UTCCivilTime.text(now), UTCCivilTime.text(now.addingTimeInterval(-lease))]).affectedRows == 1
    }

    public func place(ofCode code: String, now: Date, lease: TimeInterval) throws -> RoomPlace? {
        guard let row = try executor.query("""
            SELECT r.code AS code, r.node_id AS node_id, r.created_at AS created_at
            FROM room_places r JOIN cluster_nodes n ON n.node_id = r.node_id
            WHERE r.code = $1 AND n.seen_at >= $2
            """, [code, UTCCivilTime.text(now.addingTimeInterval(-lease))]).first else { return nil }
        return RoomPlace(code: try row.string("code"), nodeID: try row.string("node_id"),
                         createdAt: try UTCCivilTime.storedDate(row.string("created_at"), column: "room_places.created_at"))
    }

    @discardableResult
    public func remove(code: String, nodeID: String) throws -> Bool {
        try executor.query("DELETE FROM room_places WHERE code = $1 AND node_id = $2", [code, nodeID]).affectedRows == 1
    }

    @discardableResult
    public func removeDead(now: Date, lease: TimeInterval) throws -> Int {
        try executor.query("""
            DELETE FROM room_places
            WHERE NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = room_places.node_id AND n.seen_at >= $1)
            """, [UTCCivilTime.text(now.addingTimeInterval(-lease))]).affectedRows
    }
}
