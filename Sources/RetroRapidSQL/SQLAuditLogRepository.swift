import Foundation
import RetroRapidDomain

/// The audit log, on either backend (``AuditLogRepository``): one INSERT per change, inside the
/// change's own transaction; read newest first by id (ids rise with every entry, so keyset
/// paging by id never repeats or skips one). The schema's triggers refuse any UPDATE or DELETE.
///
/// Threading rule: as its executor, one thread at a time.
public struct SQLAuditLogRepository: AuditLogRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    @discardableResult
    public func append(actor: String, action: String, subject: String, before: String?, after: String?, now: Date) throws -> AuditEntry {
        let limits = AuditEntry.limits
        guard let row = try executor.query("""
            INSERT INTO audit_log (at, actor, action, subject, before_state, after_state) VALUES ($1, $2, $3, $4, $5, $6)
            RETURNING \(Self.columns)
            """, [UTCCivilTime.text(now), AuditEntry.clipped(actor.isEmpty ? "unknown" : actor, limits.actor),
                  AuditEntry.clipped(action, limits.action), AuditEntry.clipped(subject, limits.subject),
                  before.map { AuditEntry.clipped($0, limits.state) }, after.map { AuditEntry.clipped($0, limits.state) }]).first
        else { throw StoreError.unreadable("audit_log returned no row for the entry just written") }
        return try Self.entry(row)
    }

    public func entries(limit: Int, before: Int64?) throws -> [AuditEntry] {
        guard (1...500).contains(limit) else {
            throw StoreError(.invalid, "Ask for 1 to 500 entries at a time, got \(limit).", field: "limit")
        }
        return try executor.query("SELECT \(Self.columns) FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2",
                                  [before ?? Int64.max, limit]).rows.map(Self.entry)
    }

    static let columns = "id, at, actor, action, subject, before_state, after_state"

    static func entry(_ row: SQLRow) throws -> AuditEntry {
        AuditEntry(id: try row.int64("id"), at: try UTCCivilTime.storedDate(row.string("at"), column: "audit_log.at"),
                   actor: try row.string("actor"), action: try row.string("action"), subject: try row.string("subject"),
                   before: try row.optionalString("before_state"), after: try row.optionalString("after_state"))
    }
}
