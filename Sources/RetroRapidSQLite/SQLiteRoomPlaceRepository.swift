import Foundation
import RetroRapidDomain

/// Where each race room lives (`room_places`) on SQLite: what two in-process nodes on one file
/// use in the tests. A place is one `INSERT … ON CONFLICT (code) DO UPDATE … WHERE <the holder
/// is dead or is me>` inside an IMMEDIATE transaction, like a game claim
/// (``SQLiteClusterRepository``). Used from one thread at a time (the storage thread).
public struct SQLiteRoomPlaceRepository: RoomPlaceRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }

    public func place(code: String, nodeID: String, now: Date, lease: TimeInterval) throws -> Bool {
        try Self.validate(code: code, nodeID: nodeID)
        return try database.transaction(.immediate) { db in
            try statements.prepare("""
                INSERT INTO room_places (code, node_id, created_at) VALUES (?1, ?2, ?3)
                ON CONFLICT (code) DO UPDATE SET node_id = excluded.node_id, created_at = excluded.created_at
                WHERE room_places.node_id = excluded.node_id
                   OR NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = room_places.node_id AND n.seen_at >= ?4)
                """).execute([code, nodeID, UTCCivilTime.text(now), UTCCivilTime.text(now.addingTimeInterval(-lease))])
            return db.changes == 1
        }
    }

    public func place(ofCode code: String, now: Date, lease: TimeInterval) throws -> RoomPlace? {
        try statements.prepare("""
            SELECT r.code, r.node_id, r.created_at FROM room_places r JOIN cluster_nodes n ON n.node_id = r.node_id
            WHERE r.code = ? AND n.seen_at >= ?
            """).query([code, UTCCivilTime.text(now.addingTimeInterval(-lease))]) { row in
                RoomPlace(code: row.string(at: 0), nodeID: row.string(at: 1),
                          createdAt: try UTCCivilTime.storedDate(row.string(at: 2), column: "room_places.created_at"))
            }.first
    }

    @discardableResult
    public func remove(code: String, nodeID: String) throws -> Bool {
        try database.transaction(.immediate) { db in
            try statements.prepare("DELETE FROM room_places WHERE code = ? AND node_id = ?").execute([code, nodeID])
            return db.changes == 1
        }
    }

    @discardableResult
    public func removeDead(now: Date, lease: TimeInterval) throws -> Int {
        try database.transaction(.immediate) { db in
            try statements.prepare("""
                DELETE FROM room_places
                WHERE NOT EXISTS (SELECT 1 FROM cluster_nodes n WHERE n.node_id = room_places.node_id AND n.seen_at >= ?)
                """).execute([UTCCivilTime.text(now.addingTimeInterval(-lease))])
            return db.changes
        }
    }

    static func validate(code: String, nodeID: String) throws(StoreError) {
        guard !code.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "code") }
        guard !nodeID.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "nodeID") }
    }
}
