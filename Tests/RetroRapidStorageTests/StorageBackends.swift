import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQLite
import RetroRapidStorage
import RetroRapidStorageFixtures

/// The backends the contract tests run against. A second backend is one more line in `all`:
/// every `@Test(arguments: StorageBackends.all)` in this target then runs against it too.
enum StorageBackends {
    /// PostgreSQL joins when the run has a test server (`make test` always does, and fails
    /// without one: PostgreSQLAvailabilityTests).
    static let all: [BackendUnderTest] = TestPostgres.isAvailable ? [.sqlite, .postgres] : [.sqlite]
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
            dump: { try db.dump() },
            close: {},
            openAnother: {
                // A long busy timeout: a race test's racers queue on the one write lock.
                SQLiteStorage(database: try Database(path: path, busyTimeoutMilliseconds: 120_000), migrations: productMigrations)
            })
    }

    /// PostgreSQL: a new database on the test server (`TestPostgres`), dropped after the test.
    static let postgres = BackendUnderTest(description: "PostgreSQL") { _ in
        let (url, drop) = try TestPostgres.createDatabase()
        do {
            let connection = try PostgresConnection(conninfo: url)
            let storage = PostgresStorage(connection: connection, migrations: productMigrations.appendingPathComponent("postgresql"),
                                          location: url)
            try storage.migrate()
            return StoreUnderTest(
                connection: storage,
                addPlayer: { publicID in
                    try connection.execute("""
                        INSERT INTO players (public_id, display_name, created_at) VALUES ($1, $2, '2026-01-01T00:00:00Z') RETURNING id
                        """, [publicID, "Racer"]).first!.int64(at: 0)
                },
                dump: { try postgresDump(connection) },
                close: drop,
                openAnother: {
                    PostgresStorage(connection: try PostgresConnection(conninfo: url),
                                    migrations: productMigrations.appendingPathComponent("postgresql"), location: url)
                })
        } catch {
            drop()
            throw error
        }
    }
}

/// Every row of every table, as PostgreSQL writes a row as text, table by table in name order
/// and rows in text order: equal before and after means nothing changed.
private func postgresDump(_ connection: PostgresConnection) throws -> [String] {
    let tables = try connection.execute("""
        SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name
        """).map { $0.string(at: 0) }
    var lines: [String] = []
    for table in tables {
        lines.append("-- \(table)")
        lines += try connection.execute("SELECT t::text FROM \(table) t ORDER BY 1").map { $0.string(at: 0) }
    }
    return lines
}

/// An open store for one test.
struct StoreUnderTest {
    let connection: any StorageConnection
    /// A bare player row with this public id and the name "Racer" (no repository, no
    /// validation): the fixture most tests start from. Returns its id.
    let addPlayer: (_ publicID: String) throws -> Int64
    /// Everything stored, as text: equal before and after means nothing changed.
    let dump: () throws -> [String]
    /// Drops what `open` made beyond the temporary folder (a PostgreSQL database).
    let close: () -> Void
    /// Another connection to the same store, for racers on threads of their own.
    let openAnother: @Sendable () throws -> any StorageConnection

    func repositories(_ settings: RepositorySettings = RepositorySettings()) -> StorageRepositories {
        connection.repositories(settings)
    }
}

/// Races `count` connections of `store` for one rule (`raceOnThreads`): each thread opens its
/// own connection, and all run `body` at once on its repositories.
func raceConnections<T: Sendable>(_ store: StoreUnderTest, _ count: Int,
                                  _ body: @escaping @Sendable (_ index: Int, _ repositories: StorageRepositories) throws -> T) -> [Result<T, any Error>] {
    raceOnThreads(count, open: store.openAnother) { index, connection in
        try body(index, connection.repositories(RepositorySettings()))
    }
}

/// Runs `body` with a fresh store of `backend` in a temporary folder, removed afterwards.
func withStore(_ backend: BackendUnderTest, _ body: (StoreUnderTest) throws -> Void) throws {
    try withTemporaryDirectory { folder in
        let store = try backend.open(folder)
        defer { store.close() }
        try body(store)
    }
}
