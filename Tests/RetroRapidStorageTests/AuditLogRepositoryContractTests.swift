import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// The contract of `AuditLogRepository` and of an audited change, run against every backend in
/// `StorageBackends.all`.
@Suite struct AuditLogRepositoryContractTests {
    /// The store's own SQL connection, to try what no repository offers (editing the log).
    static func executor(_ store: StoreUnderTest) -> any SQLExecutor {
        if let sqlite = store.connection as? SQLiteStorage { return sqlite.executor }
        if let postgres = store.connection as? PostgresStorage { return postgres.connection }
        preconditionFailure("no SQL connection under \(type(of: store.connection))")
    }

    @Test(arguments: StorageBackends.all) func entriesComeBackNewestFirstInPages(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let log = store.repositories().auditLog
            for index in 1...5 {
                try log.append(actor: "cli:ada", action: "codes.create", subject: "CODE\(index)", before: nil, after: "unlock \(index)",
                               now: utc("2026-01-01T09:00:00Z").addingTimeInterval(Double(index)))
            }
            let first = try log.entries(limit: 2, before: nil)
            #expect(first.map(\.subject) == ["CODE5", "CODE4"])
            #expect(first[0].actor == "cli:ada" && first[0].action == "codes.create" && first[0].before == nil && first[0].after == "unlock 5")
            #expect(first[0].at == utc("2026-01-01T09:00:05Z"))
            #expect(try log.entries(limit: 10, before: first[1].id).map(\.subject) == ["CODE3", "CODE2", "CODE1"])
            for limit in [0, 501] {
                #expect((#expect(throws: StoreError.self) { try log.entries(limit: limit, before: nil) })?.code == .invalid)
            }
            // Text longer than a field holds is cut, never refused.
            let long = try log.append(actor: "cli:ada", action: "players.rename", subject: String(repeating: "s", count: 300),
                                      before: nil, after: String(repeating: "a", count: 3000), now: utc("2026-01-01T10:00:00Z"))
            #expect(long.subject.count == 200 && long.subject.hasSuffix("…") && long.after?.count == 2000)
        }
    }

    @Test(arguments: StorageBackends.all) func theLogIsNeverEdited(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let log = store.repositories().auditLog
            try log.append(actor: "cli:ada", action: "codes.disable", subject: "ARCTICCONF", before: "live", after: "disabled",
                           now: utc("2026-01-01T09:00:00Z"))
            let before = try store.dump()
            let sql = Self.executor(store)
            #expect(throws: (any Error).self) { try sql.query("UPDATE audit_log SET actor = $1", ["cli:mallory"]) }
            #expect(throws: (any Error).self) { try sql.query("DELETE FROM audit_log", []) }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func anAuditedChangeAndItsEntryCommitTogetherOrNotAtAll(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let now = utc("2026-01-01T09:00:00Z")
            let code = try store.connection.audited(by: "cli:ada", action: "codes.create", subject: "PRESS2026", now: now,
                                                    repositories: repositories) { () -> (value: PromoCode, before: String?, after: String?) in
                (try repositories.codes.create(code: "PRESS2026", kind: .unlock, now: now), nil, "unlock")
            }
            #expect(code.code == "PRESS2026")
            #expect(try repositories.auditLog.entries(limit: 10, before: nil).map(\.subject) == ["PRESS2026"])

            // A change that fails half-way leaves neither its work nor an entry.
            let before = try store.dump()
            #expect(throws: StoreError.self) {
                try store.connection.audited(by: "cli:ada", action: "codes.create", subject: "PRESS2027", now: now,
                                             repositories: repositories) { () -> (value: Int, before: String?, after: String?) in
                    try repositories.codes.create(code: "PRESS2027", kind: .unlock, now: now)
                    try repositories.codes.create(code: "PRESS2026", kind: .unlock, now: now)  // taken: a conflict
                    return (0, nil, "two codes")
                }
            }
            #expect(try store.dump() == before)
            // A change that changed nothing writes no entry.
            _ = try store.connection.audited(by: "cli:ada", action: "codes.disable", subject: "NOPE", now: now,
                                             repositories: repositories) { (value: 1, before: nil, after: nil) }
            #expect(try repositories.auditLog.entries(limit: 10, before: nil).count == 1)
        }
    }
}
