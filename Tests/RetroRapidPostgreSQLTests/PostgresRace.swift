import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures

/// Races `count` connections to `url` for one rule on a real server (`raceOnThreads`): each
/// thread opens its own ``PostgresConnection``, and all run `body` at once.
func raceOnConnections<T: Sendable>(_ count: Int, url: String,
                                    _ body: @escaping @Sendable (_ index: Int, _ connection: PostgresConnection) throws -> T) -> [Result<T, any Error>] {
    raceOnThreads(count, open: { try PostgresConnection(conninfo: url) }, body)
}

/// A fresh database on the test server with the product's PostgreSQL migrations applied,
/// dropped after `body`; `body` gets its URL (for the racers) and a connection of the test's
/// own (for setting up and checking).
func withRaceDatabase<T>(_ body: (_ url: String, _ connection: PostgresConnection) throws -> T) throws -> T {
    try TestPostgres.withDatabase { url in
        let connection = try PostgresConnection(conninfo: url)
        try PostgresStorage(connection: connection, migrations: productMigrations.appendingPathComponent("postgresql"),
                            location: url).migrate()
        return try body(url, connection)
    }
}

/// Inserts a bare player and returns its id.
func addRacePlayer(_ connection: PostgresConnection, _ publicID: String) throws -> Int64 {
    try connection.execute("""
        INSERT INTO players (public_id, display_name, created_at) VALUES ($1, $2, '2026-01-01T00:00:00Z') RETURNING id
        """, [publicID, "Racer \(publicID)"]).first!.int64(at: 0)
}

/// How many of `outcomes` succeeded, and whether every other one failed with an `E`.
func tally<T, E: Error>(_ outcomes: [Result<T, any Error>], refusedWith _: E.Type) -> (won: Int, refused: Int, other: [String]) {
    var won = 0, refused = 0
    var other: [String] = []
    for outcome in outcomes {
        switch outcome {
        case .success: won += 1
        case .failure(let error) where error is E: refused += 1
        case .failure(let error): other.append("\(error)")
        }
    }
    return (won, refused, other)
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
