import Foundation
import RetroRapidDomain

/// The counts behind the rate limits (`rate_limit_keys`, `rate_limit_events`) on PostgreSQL,
/// shared by every node on the database. The rule is ``RateLimitWindow``'s.
///
/// How a check and its count stay exact across nodes: `take` first upserts each key's row
/// (`INSERT … ON CONFLICT DO UPDATE`, which always writes the row and so holds its lock until
/// commit), in one order (``RateLimitKey/lockOrder(_:_:)``) so two takes cannot deadlock on
/// them; only then does it read the key's events and insert its own. At READ COMMITTED that
/// read is a new statement with a new snapshot, taken after the lock was granted, so it sees
/// every event of every take that held the lock before. Chosen over the alternatives:
/// - `pg_advisory_xact_lock`: the lock alone does not move a transaction's snapshot. Inside a
///   group's REPEATABLE READ transaction (docs/STORAGE.md, "Group commit") the count would be
///   read from a snapshot older than the lock and miss another node's events, silently. The
///   row write instead meets that case as a serialization failure: the group gives up, and its
///   jobs run again alone.
/// - SERIALIZABLE with retries: it cannot run inside a group at all, and under contention on
///   one key (the attack this is for) most attempts would fail and retry rather than queue.
/// Race test: `PostgresRateLimitRaceTests`.
/// Used from one thread at a time (a storage thread).
public struct PostgresRateLimitRepository: RateLimitRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    @discardableResult
    public func take(_ keys: [RateLimitKey], now: Date) throws -> RateLimitTicket {
        for key in keys { try key.validate() }
        let milliseconds = try RateLimitWindow.milliseconds(now)
        return try connection.transaction(.readCommitted) { pg in
            for key in keys.sorted(by: RateLimitKey.lockOrder) {
                try pg.execute("""
                    INSERT INTO rate_limit_keys (action, scope, key, touched_ms) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (action, scope, key) DO UPDATE
                    SET touched_ms = GREATEST(rate_limit_keys.touched_ms, excluded.touched_ms)
                    """, [key.action, key.scope, key.key, milliseconds])
            }
            for key in keys {
                if let reached = try refusal(key, nowMilliseconds: milliseconds) { throw reached }  // rolls back the touches
            }
            var ids: [Int64] = []
            for key in keys {
                let inserted = try pg.execute("""
                    INSERT INTO rate_limit_events (action, scope, key, at_ms) VALUES ($1, $2, $3, $4) RETURNING id
                    """, [key.action, key.scope, key.key, milliseconds])
                guard let text = inserted.first?.optionalString(at: 0), let id = Int64(text) else {
                    throw StoreError.unreadable("rate_limit_events: the new row's id did not come back as an integer")
                }
                ids.append(id)
            }
            return RateLimitTicket(eventIDs: ids)
        }
    }

    public func release(_ ticket: RateLimitTicket) throws {
        for id in ticket.eventIDs {
            try connection.execute("DELETE FROM rate_limit_events WHERE id = $1", [id])
        }
    }

    @discardableResult
    public func prune(before cutoff: Date) throws -> Int {
        let milliseconds = try RateLimitWindow.milliseconds(cutoff)
        // A key being checked now has a newer `touched_ms`; the DELETE re-checks it under the
        // row's lock, so a key is never deleted under a take that holds it.
        return try connection.transaction(.readCommitted) { pg in
            try pg.execute("DELETE FROM rate_limit_events WHERE at_ms <= $1", [milliseconds]).affectedRows
                + pg.execute("DELETE FROM rate_limit_keys WHERE touched_ms <= $1", [milliseconds]).affectedRows
        }
    }

    /// The time is read as text and parsed here, so a damaged value is an error, not a trap.
    public func refusal(_ key: RateLimitKey, nowMilliseconds now: Int64) throws -> RateLimitReached? {
        let row = try connection.execute("""
            SELECT at_ms FROM rate_limit_events WHERE action = $1 AND scope = $2 AND key = $3 AND at_ms > $4
            ORDER BY at_ms DESC LIMIT 1 OFFSET $5
            """, [key.action, key.scope, key.key, RateLimitWindow.start(key, now: now), Int64(key.count - 1)]).first
        var countThNewest: Int64?
        if let row {
            guard let text = row.optionalString(at: 0), let value = Int64(text) else {
                throw StoreError.unreadable("rate_limit_events.at_ms holds '\(row.optionalString(at: 0) ?? "NULL")', not an integer")
            }
            countThNewest = value
        }
        return try RateLimitWindow.refusal(key, countThNewest: countThNewest, now: now)
    }
}
