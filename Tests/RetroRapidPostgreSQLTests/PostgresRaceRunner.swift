import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures

/// Racers for the repositories' race tests (`raceOnConnections` in PostgresRace.swift does the
/// racing), and the migrated database they race on.
enum PostgresRaceRunner {
    /// Runs `body(index, connection)` for `count` racers at once and returns what each did, in
    /// index order (a racer that could not even connect fails with that error).
    static func run<T: Sendable>(_ count: Int, url: String,
                                 _ body: @escaping @Sendable (_ index: Int, _ connection: PostgresConnection) throws -> T) -> [Result<T, any Error>] {
        raceOnConnections(count, url: url, body)
    }

    /// A fresh database on the test server with the product's PostgreSQL migrations applied,
    /// dropped after `body`; `body` gets its URL and a connection of the test's own.
    static func withMigratedDatabase<T>(_ body: (_ url: String, _ connection: PostgresConnection) throws -> T) throws -> T {
        try TestPostgres.withDatabase { url in
            let connection = try PostgresConnection(conninfo: url)
            try PostgresStorage(connection: connection, migrations: productMigrations.appendingPathComponent("postgresql"),
                                location: url).migrate()
            return try body(url, connection)
        }
    }
}

extension Result {
    /// What the racer got back, when it succeeded.
    var value: Success? { try? get() }

    /// The ``StoreError`` the racer was refused with; nil when it succeeded or failed otherwise.
    var refusal: StoreError? {
        guard case .failure(let error) = self else { return nil }
        return error as? StoreError
    }
}
