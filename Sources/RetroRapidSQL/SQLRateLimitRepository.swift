import Foundation
import RetroRapidDomain

/// The counts behind the rate limits (`rate_limit_keys`, `rate_limit_events`), on either
/// backend; on PostgreSQL shared by every node on the database. The rule is
/// ``RateLimitWindow``'s.
///
/// How a check and its count stay exact: `take` first upserts each key's row
/// (`INSERT … ON CONFLICT DO UPDATE`, which always writes the row), in one order
/// (``RateLimitKey/lockOrder(_:_:)``) so two takes cannot deadlock on them; only then does it
/// read the key's events and insert its own.
/// - On PostgreSQL the row write holds the row's lock until commit. At READ COMMITTED the read
///   after it is a new statement with a new snapshot, taken after the lock was granted, so it
///   sees every event of every take that held the lock before. Chosen over the alternatives:
///   `pg_advisory_xact_lock` alone does not move a transaction's snapshot (inside a group's
///   REPEATABLE READ transaction, docs/STORAGE.md "Group commit", the count would be read from
///   a snapshot older than the lock and miss another node's events, silently; the row write
///   instead meets that case as a serialization failure, the group gives up and its jobs run
///   again alone); SERIALIZABLE with retries cannot run inside a group at all, and under
///   contention on one key (the attack this is for) most attempts would fail and retry rather
///   than queue.
/// - On SQLite the IMMEDIATE transaction takes the file's write lock before it reads, so the
///   check and the count are one step whoever else opens the file (an operator's command);
///   the key's row is written all the same, so both schemas stay alike.
/// Race test: `PostgresRateLimitRaceTests`.
public struct SQLRateLimitRepository: RateLimitRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    @discardableResult
    public func take(_ keys: [RateLimitKey], now: Date) throws -> RateLimitTicket {
        for key in keys { try key.validate() }
        let milliseconds = try RateLimitWindow.milliseconds(now)
        let touched = executor.dialect.greatest("rate_limit_keys.touched_ms", "excluded.touched_ms")
        return try executor.writeTransaction {
            for key in keys.sorted(by: RateLimitKey.lockOrder) {
                try executor.query("""
                    INSERT INTO rate_limit_keys (action, scope, key, touched_ms) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (action, scope, key) DO UPDATE SET touched_ms = \(touched)
                    """, [key.action, key.scope, key.key, milliseconds])
            }
            for key in keys {
                if let reached = try refusal(key, nowMilliseconds: milliseconds) { throw reached }  // rolls back the touches
            }
            var ids: [Int64] = []
            for key in keys {
                let inserted = try executor.query("""
                    INSERT INTO rate_limit_events (action, scope, key, at_ms) VALUES ($1, $2, $3, $4) RETURNING id
                    """, [key.action, key.scope, key.key, milliseconds])
                guard let row = inserted.first else {
                    throw StoreError.unreadable("rate_limit_events: the new row's id did not come back")
                }
                ids.append(try row.int64("id"))
            }
            return RateLimitTicket(eventIDs: ids)
        }
    }

    public func release(_ ticket: RateLimitTicket) throws {
        guard !ticket.eventIDs.isEmpty else { return }
        try executor.writeTransaction {
            for id in ticket.eventIDs {
                try executor.query("DELETE FROM rate_limit_events WHERE id = $1", [id])
            }
        }
    }

    @discardableResult
    public func prune(before cutoff: Date) throws -> Int {
        let milliseconds = try RateLimitWindow.milliseconds(cutoff)
        // A key being checked now has a newer `touched_ms`; the DELETE re-checks it under the
        // row's lock, so a key is never deleted under a take that holds it.
        return try executor.writeTransaction {
            try executor.query("DELETE FROM rate_limit_events WHERE at_ms <= $1", [milliseconds]).affectedRows
                + executor.query("DELETE FROM rate_limit_keys WHERE touched_ms <= $1", [milliseconds]).affectedRows
        }
    }

    /// The newest but `count - 1` of the key's events in its window, if there are that many:
    /// the one whose age decides whether another is allowed.
    public func refusal(_ key: RateLimitKey, nowMilliseconds now: Int64) throws -> RateLimitReached? {
        let countThNewest = try executor.query("""
            SELECT at_ms FROM rate_limit_events WHERE action = $1 AND scope = $2 AND key = $3 AND at_ms > $4
            ORDER BY at_ms DESC LIMIT 1 OFFSET $5
            """, [key.action, key.scope, key.key, RateLimitWindow.start(key, now: now), Int64(key.count - 1)])
            .first?.int64("at_ms")
        return try RateLimitWindow.refusal(key, countThNewest: countThNewest, now: now)
    }
}
