import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures

/// Races many connections for one rule on a real server: `count` threads each open their
/// own ``PostgresConnection`` to `url`, wait until every one is connected, and then all run
/// `body` at once. Returns each thread's outcome, by index. The race tests assert the exact
/// outcome (how many won, what the tables hold), never how long it took. One race at a time in
/// the test process (suites run in parallel): the server's connection limit is shared.
func raceOnConnections<T: Sendable>(_ count: Int, url: String,
                                    _ body: @escaping @Sendable (_ index: Int, _ connection: PostgresConnection) throws -> T) -> [Result<T, any Error>] {
    oneRaceAtATime.lock()
    defer { oneRaceAtATime.unlock() }
    let outcomes = RaceOutcomes<T>(count)
    let connected = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        let thread = Thread {
            defer { finished.leave() }
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(conninfo: url)
            } catch {
                outcomes.set(index, .failure(error))
                connected.signal()
                return
            }
            connected.signal()
            go.wait()
            outcomes.set(index, Result { try body(index, connection) })
        }
        thread.start()
    }
    for _ in 0..<count { connected.wait() }
    for _ in 0..<count { go.signal() }
    finished.wait()
    return outcomes.all
}

private let oneRaceAtATime = NSLock()

/// The outcomes of a race, written by its threads under a lock.
private final class RaceOutcomes<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<T, any Error>?]

    init(_ count: Int) { results = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: Result<T, any Error>) {
        lock.lock()
        results[index] = result
        lock.unlock()
    }

    var all: [Result<T, any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return results.map { $0! }
    }
}

/// A migrated, empty test database for a race: its URL and a connection for setting up and
/// checking. Dropped afterwards.
func withRaceDatabase(_ body: (_ url: String, _ connection: PostgresConnection) throws -> Void) throws {
    try TestPostgres.withDatabase { url in
        let connection = try PostgresConnection(conninfo: url)
        try PostgresStorage(connection: connection, migrations: productMigrations.appendingPathComponent("postgresql"), location: url).migrate()
        try body(url, connection)
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
