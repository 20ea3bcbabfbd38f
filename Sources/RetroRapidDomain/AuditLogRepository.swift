import Foundation

/// The audit log: appended to in the transaction of each operator's change
/// (``StorageConnection/audited(by:action:subject:now:repositories:_:)``), read newest first,
/// never edited (the schema refuses an UPDATE or DELETE of it).
public protocol AuditLogRepository {
    /// Appends an entry; text longer than a field holds is cut, never refused.
    @discardableResult
    func append(actor: String, action: String, subject: String, before: String?, after: String?, now: Date) throws -> AuditEntry

    /// Up to `limit` entries (1 to 500), newest first, older than the entry `before` when given.
    /// - Throws: `StoreError(.invalid)` for a limit out of range.
    func entries(limit: Int, before: Int64?) throws -> [AuditEntry]
}

extension StorageConnection {
    /// Runs `change` over `repositories` (this connection's) and appends its audit entry in the
    /// same transaction: a change that throws leaves no entry, and an entry that cannot be
    /// written undoes its change. `change` returns its value and the state before and after,
    /// in words; a change that changed nothing returns nil for both and writes no entry.
    public func audited<T>(by actor: String, action: String, subject: String, now: Date, repositories: StorageRepositories,
                           _ change: () throws -> (value: T, before: String?, after: String?)) throws -> T {
        var value: T?
        let outcomes = try commitGroup(1) { _ in
            let (result, before, after) = try change()
            if before != nil || after != nil {
                try repositories.auditLog.append(actor: actor, action: action, subject: subject, before: before, after: after, now: now)
            }
            value = result
        }
        if let error = outcomes.first ?? nil { throw error }
        guard let value else { throw StoreError.unreadable("an audited change returned nothing") }
        return value
    }
}
