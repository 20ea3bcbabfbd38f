import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorage
import RetroRapidStorageFixtures

/// The backends the contract tests run against. A second backend is one more line in `all`:
/// every `@Test(arguments: StorageBackends.all)` in this target then runs against it too.
enum StorageBackends {
    static let all: [BackendUnderTest] = [.sqlite]
}

/// One backend as the contract tests see it: how to make a fresh, migrated, empty store, and
/// the two things the tests need beyond the repositories (a bare player, a snapshot).
struct BackendUnderTest: Sendable, CustomStringConvertible {
    let description: String
    /// Opens a fresh store in `folder` (empty, the product's migrations applied).
    let open: @Sendable (_ folder: URL) throws -> StoreUnderTest

    /// SQLite: a real database file, through the same `StorageFactory` as the server.
    static let sqlite = BackendUnderTest(description: "SQLite") { folder in
        let path = folder.appendingPathComponent("contract.sqlite").path
        let connection = try StorageFactory.open(path: path, migrationsPath: productMigrations.path, ifMissing: .create)
        try connection.migrate()
        guard let sqlite = connection as? SQLiteStorage else { preconditionFailure("StorageFactory opened \(type(of: connection)), not SQLite") }
        let db = sqlite.database
        return StoreUnderTest(
            connection: connection,
            addPlayer: { publicID in
                try db.prepare("INSERT INTO players (public_id, display_name, created_at) VALUES (?, ?, '2026-01-01T00:00:00Z')")
                    .execute([publicID, "Racer"])
                return db.lastInsertRowID
            },
            dump: { try db.dump() })
    }
}

/// An open store for one test.
struct StoreUnderTest {
    let connection: any StorageConnection
    /// A bare player row with this public id and the name "Racer" (no repository, no
    /// validation): the fixture most tests start from. Returns its id.
    let addPlayer: (_ publicID: String) throws -> Int64
    /// Everything stored, as text: equal before and after means nothing changed.
    let dump: () throws -> [String]

    func repositories(_ settings: RepositorySettings = RepositorySettings()) -> StorageRepositories {
        connection.repositories(settings)
    }
}

/// Runs `body` with a fresh store of `backend` in a temporary folder, removed afterwards.
func withStore(_ backend: BackendUnderTest, _ body: (StoreUnderTest) throws -> Void) throws {
    try withTemporaryDirectory { folder in try body(try backend.open(folder)) }
}
