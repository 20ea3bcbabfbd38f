import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures

/// Racers for the repositories' race tests: each on a thread of its own with a connection of
/// its own to one test database (as many nodes would be), all connected before any starts and
/// then released together, so their transactions really overlap on the server.
enum PostgresRaceRunner {
    /// Runs `body(index, connection)` for `count` racers at once and returns what each did, in
    /// index order (a racer that could not even connect fails with that error).
    static func run<T: Sendable>(_ count: Int, url: String,
                                 _ body: @escaping @Sendable (_ index: Int, _ connection: PostgresConnection) throws -> T) -> [Result<T, any Error>] {
        let results = Results<T>(count)
        let gate = StartGate()
        let connected = DispatchGroup()
        let finished = DispatchGroup()
        for index in 0..<count {
            connected.enter()
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                let connection: PostgresConnection
                do {
                    connection = try PostgresConnection(conninfo: url)
                } catch {
                    results.set(index, .failure(error))
                    connected.leave()
                    return
                }
                connected.leave()
                gate.wait()
                results.set(index, Result { try body(index, connection) })
            }
            thread.start()
        }
        connected.wait()
        gate.open()
        finished.wait()
        return results.all
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

    /// Holds every racer until all are connected.
    private final class StartGate: @unchecked Sendable {
        private let condition = NSCondition()
        private var isOpen = false

        func wait() {
            condition.lock()
            while !isOpen { condition.wait() }
            condition.unlock()
        }

        func open() {
            condition.lock()
            isOpen = true
            condition.broadcast()
            condition.unlock()
        }
    }

    private final class Results<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [Result<T, any Error>?]

        init(_ count: Int) { stored = Array(repeating: nil, count: count) }

        func set(_ index: Int, _ result: Result<T, any Error>) {
            lock.lock()
            stored[index] = result
            lock.unlock()
        }

        var all: [Result<T, any Error>] {
            lock.lock()
            defer { lock.unlock() }
            return stored.map { $0! }
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
