import Foundation
import RetroRapidDomain

/// The counts behind the rate limits (`rate_limit_keys`, `rate_limit_events`) on SQLite. One
/// process holds the file and its storage thread runs one job at a time; `take` still runs in an
/// IMMEDIATE transaction, whose write lock is taken before it reads, so the check and the count
/// are one step whoever else opens the file (an operator's command). The key's row is written
/// as on PostgreSQL (where it is the lock), so both schemas stay alike. The rule is
/// ``RateLimitWindow``'s. Used from one thread at a time (the storage thread).
public struct SQLiteRateLimitRepository: RateLimitRepository {
    public let database: Database
    let statements: ScoreStatements

    public init(database: Database) {
        self.database = database
        self.statements = ScoreStatements(database)
    }

    @discardableResult
    public func take(_ keys: [RateLimitKey], now: Date) throws -> RateLimitTicket {
        for key in keys { try key.validate() }
        let milliseconds = try RateLimitWindow.milliseconds(now)
        return try database.transaction(.immediate) { db in
            for key in keys.sorted(by: RateLimitKey.lockOrder) {
                try statements.prepare("""
                    INSERT INTO rate_limit_keys (action, scope, key, touched_ms) VALUES (?1, ?2, ?3, ?4)
                    ON CONFLICT (action, scope, key) DO UPDATE SET touched_ms = max(touched_ms, excluded.touched_ms)
                    """).execute([key.action, key.scope, key.key, milliseconds])
            }
            for key in keys {
                if let reached = try refusal(key, nowMilliseconds: milliseconds) { throw reached }  // rolls back the touches
            }
            var ids: [Int64] = []
            for key in keys {
                try statements.prepare("INSERT INTO rate_limit_events (action, scope, key, at_ms) VALUES (?1, ?2, ?3, ?4)")
                    .execute([key.action, key.scope, key.key, milliseconds])
                ids.append(db.lastInsertRowID)
            }
            return RateLimitTicket(eventIDs: ids)
        }
    }

    public func release(_ ticket: RateLimitTicket) throws {
        guard !ticket.eventIDs.isEmpty else { return }
        try database.transaction(.immediate) { _ in
            for id in ticket.eventIDs {
                try statements.prepare("DELETE FROM rate_limit_events WHERE id = ?").execute([id])
            }
        }
    }

    @discardableResult
    public func prune(before cutoff: Date) throws -> Int {
        let milliseconds = try RateLimitWindow.milliseconds(cutoff)
        return try database.transaction(.immediate) { db in
            try statements.prepare("DELETE FROM rate_limit_events WHERE at_ms <= ?").execute([milliseconds])
            let events = db.changes
            try statements.prepare("DELETE FROM rate_limit_keys WHERE touched_ms <= ?").execute([milliseconds])
            return events + db.changes
        }
    }

    public func refusal(_ key: RateLimitKey, nowMilliseconds now: Int64) throws -> RateLimitReached? {
        let countThNewest = try statements.prepare("""
            SELECT at_ms FROM rate_limit_events WHERE action = ?1 AND scope = ?2 AND key = ?3 AND at_ms > ?4
            ORDER BY at_ms DESC LIMIT 1 OFFSET ?5
            """).query([key.action, key.scope, key.key, RateLimitWindow.start(key, now: now), Int64(key.count - 1)]) {
                $0.int64(at: 0)
            }.first
        return try RateLimitWindow.refusal(key, countThNewest: countThNewest, now: now)
    }
}
