import Foundation
import RetroRapidDomain

/// Races `count` threads for one rule: each thread opens its own connection with `open`, waits
/// until every one is open, and then all run `body` at once, so their work really overlaps.
/// Returns each thread's outcome by index (a connection that could not be opened is that
/// thread's failure). Race tests assert the exact outcome (how many won, what the tables
/// hold), never how long it took.
///
/// One race at a time in the test process (suites run in parallel): a PostgreSQL server's
/// connection limit is shared by every test, and SQLite's racers queue on one write lock.
public func raceOnThreads<Connection, T: Sendable>(
    _ count: Int,
    open: @escaping @Sendable () throws -> Connection,
    _ body: @escaping @Sendable (_ index: Int, _ connection: Connection) throws -> T
) -> [Result<T, any Error>] {
    oneRaceAtATime.lock()
    defer { oneRaceAtATime.unlock() }
    let outcomes = RaceOutcomes<T>(count)
    let opened = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        Thread {
            defer { finished.leave() }
            let connection: Connection
            do {
                connection = try open()
            } catch {
                outcomes.set(index, .failure(error))
                opened.signal()
                return
            }
            opened.signal()
            go.wait()
            outcomes.set(index, Result { try body(index, connection) })
        }.start()
    }
    for _ in 0..<count { opened.wait() }
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
        return results.map { $0 ?? .failure(StoreError(.unreadable, "racer never finished")) }
    }
}
