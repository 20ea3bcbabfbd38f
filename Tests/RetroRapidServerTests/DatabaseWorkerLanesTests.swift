#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

/// The `DatabaseWorker` with several storage threads, against a real SQLite file (WAL and a
/// busy timeout let its connections take turns writing): what each lane keeps in order, that
/// lanes really run side by side, that the store is migrated once, and that a stop drains all.
@Suite("DatabaseWorker with several storage threads")
struct DatabaseWorkerLanesTests {
    static let threads = 4

    /// Two keys whose jobs run on different threads, and one whose lane is the serial lane's.
    private func keysOnDifferentLanes(_ worker: DatabaseWorker) throws -> (Int64, Int64) {
        let first: Int64 = 1
        let second = try #require((2...64).first { worker.lane(orderedBy: $0) != worker.lane(orderedBy: first) })
        return (first, Int64(second))
    }

    /// The calling thread's name, as `nameCurrentThread` set it (Linux: its `comm` file).
    private static func currentThreadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines) ?? ""
    }

    /// A lock and a count, one per key, in an array.
    private final class Slot: Sendable {
        let next = Mutex(0)
        let running = Atomic<Int>(0)
    }

    @Test func theStoreIsMigratedOnceThenEveryThreadOpensIt() throws {
        let harness = try WorkerHarness(threads: Self.threads)
        let worker = harness.worker
        let migrations = try FileManager.default.contentsOfDirectory(atPath: TemporaryDataFolder.migrationsPath)
            .filter { $0.hasSuffix(".sql") }
        #expect(worker.threadCount == Self.threads && worker.lanes.count == Self.threads)
        #expect(worker.appliedMigrations.count == migrations.count)
        let recorded = try harness.data.database().prepare("SELECT count(*) FROM schema_migrations").query { $0.int(at: 0) }.first
        #expect(recorded == migrations.count)
        // Every thread's connection sees the migrated schema.
        for lane in worker.lanes {
            let applied = try waitFor { done in
                worker.perform(on: lane, { storage in try storage.connection.appliedMigrations().count }, then: done)
            }
            #expect(applied == migrations.count)
        }
        worker.shutdown()
        // A second start on the same file finds nothing to apply.
        var configuration = harness.data.configuration()
        configuration.storageThreads = Self.threads
        let again = try DatabaseWorker(configuration: configuration, mailbox: harness.mailbox)
        defer { again.shutdown() }
        #expect(again.appliedMigrations.isEmpty)
    }

    @Test func eachThreadHasItsOwnContextAndEveryJobGetsItsOwnThreads() throws {
        let harness = try WorkerHarness(threads: Self.threads)
        let worker = harness.worker
        struct Seen: Equatable, Sendable { let context: ObjectIdentifier; let thread: String }
        var byLane: [Int: Seen] = [:]
        for round in 0..<3 {
            for lane in worker.lanes {
                let seen = try waitFor { done in
                    worker.perform(on: lane, { storage in
                        storage.assertOnStorageThread()
                        return Seen(context: ObjectIdentifier(storage), thread: Self.currentThreadName())
                    }, then: done)
                }
                if round == 0 { byLane[lane.index] = seen } else { #expect(byLane[lane.index] == seen, "lane \(lane.index)") }
            }
        }
        #expect(Set(byLane.values.map(\.context)).count == Self.threads)
        #expect(byLane.values.map(\.thread).sorted() == ["rr-storage", "rr-storage-1", "rr-storage-2", "rr-storage-3"])
        // The serial lane is the first thread's, and a key always lands on the same lane.
        #expect(byLane[worker.serialLane.index]?.thread == "rr-storage")
        for key: Int64 in [0, 1, 7, 1_000_003, -5, .max] {
            #expect(worker.lane(orderedBy: key) == worker.lane(orderedBy: key))
            #expect((0..<Self.threads).contains(worker.lane(orderedBy: key).index))
        }
    }

    @Test func withOneThreadEveryKeyIsTheSerialLane() throws {
        let harness = try WorkerHarness()
        let worker = harness.worker
        #expect(worker.threadCount == 1)
        for key: Int64 in [0, 1, 2, 3, 42, -1, .max, .min] {
            #expect(worker.lane(orderedBy: key) == worker.serialLane)
        }
    }

    @Test func jobsWithOneKeyKeepTheirOrderUnderAFloodFromSeveralThreads() throws {
        let harness = try WorkerHarness(threads: Self.threads)
        let worker = harness.worker
        let keys: [Int64] = Array(1...8)
        let submitters = 4
        let rounds = 50
        let perKey = submitters * rounds
        // Submitting under a lock per key makes the order each key's jobs were submitted in the
        // order of their numbers, while four threads submit to all keys at once.
        let slots = keys.map { _ in Slot() }
        let ran = Mutex<[Int64: [Int]]>([:])
        let completed = Mutex<[Int64: [Int]]>([:])
        let overlaps = Atomic<Int>(0)
        let threads = Mutex<[Int64: Set<String>]>([:])
        let group = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: submitters) { submitter in
            for turn in 0..<(rounds * keys.count) {
                let slot = (turn + submitter) % keys.count
                let key = keys[slot]
                slots[slot].next.withLock { next in
                    let number = next
                    next += 1
                    group.enter()
                    worker.perform(orderedBy: key, { storage -> Int in
                        if slots[slot].running.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                            overlaps.add(1, ordering: .sequentiallyConsistent)
                        }
                        defer { slots[slot].running.subtract(1, ordering: .sequentiallyConsistent) }
                        storage.assertOnStorageThread()
                        ran.withLock { $0[key, default: []].append(number) }
                        threads.withLock { _ = $0[key, default: []].insert(Self.currentThreadName()) }
                        return number
                    }, then: { result in
                        completed.withLock { $0[key, default: []].append((try? result.get()) ?? -1) }
                        group.leave()
                    })
                }
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(overlaps.load(ordering: .sequentiallyConsistent) == 0)
        for key in keys {
            #expect(ran.withLock { $0[key] } == Array(0..<perKey), "key \(key) ran out of order")
            #expect(completed.withLock { $0[key] } == Array(0..<perKey), "key \(key) completed out of order")
            #expect(threads.withLock { $0[key]?.count } == 1, "key \(key) ran on more than one thread")
        }
        // The eight keys were spread over every thread.
        #expect(Set(threads.withLock { $0.values.flatMap { $0 } }).count == Self.threads)
    }

    @Test func jobsWithDifferentKeysRunAtTheSameTime() throws {
        let harness = try WorkerHarness(threads: Self.threads)
        let worker = harness.worker
        let (first, second) = try keysOnDifferentLanes(worker)
        // Each job arrives, then waits for the other to arrive: both get through only if they
        // run at the same time. On one thread the first would wait the whole 10 s in vain.
        let firstArrived = DispatchSemaphore(value: 0)
        let secondArrived = DispatchSemaphore(value: 0)
        let met = Mutex<[Int64: Bool]>([:])
        let group = DispatchGroup()
        for (key, mine, theirs) in [(first, firstArrived, secondArrived), (second, secondArrived, firstArrived)] {
            group.enter()
            worker.perform(orderedBy: key, { storage -> Bool in
                _ = try storage.connection.appliedMigrations()  // a real read on this thread's connection
                mine.signal()
                return theirs.wait(timeout: .now() + 10) == .success
            }, then: { result in
                met.withLock { $0[key] = (try? result.get()) ?? false }
                group.leave()
            })
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(met.withLock { $0 } == [first: true, second: true])

        // The serial lane runs beside every other lane the same way.
        let other = try #require(worker.lanes.first { $0 != worker.serialLane })
        let serialArrived = DispatchSemaphore(value: 0)
        let otherArrived = DispatchSemaphore(value: 0)
        let bothMet = try waitFor { (done: @escaping @Sendable (Result<Bool, any Error>) -> Void) in
            worker.perform(on: other, { _ in
                otherArrived.signal()
                return serialArrived.wait(timeout: .now() + 10) == .success
            }, then: { _ in })
            worker.perform({ _ in
                serialArrived.signal()
                return otherArrived.wait(timeout: .now() + 10) == .success
            }, then: done)
        }
        #expect(bothMet)
    }

    @Test func writesFromEveryThreadCommitAndShutdownDrainsEveryQueue() throws {
        let harness = try WorkerHarness(threads: Self.threads)
        let worker = harness.worker
        let perLane = 15
        // A job at the head of each lane holds its thread, so everything behind it is certainly queued.
        let gates = worker.lanes.map { _ in DispatchSemaphore(value: 0) }
        for (lane, gate) in zip(worker.lanes, gates) {
            worker.perform(on: lane, { _ in gate.wait() }, then: { _ in })
        }
        let created = Mutex(0)
        for lane in worker.lanes {
            for _ in 0..<perLane {
                worker.perform(on: lane, { storage in
                    _ = try storage.players.createPlayer(displayName: nil, deviceLabel: "", now: storage.now)
                    created.withLock { $0 += 1 }
                }, then: { _ in })
            }
        }
        #expect(worker.queueDepth >= perLane * Self.threads)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { for gate in gates { gate.signal() } }
        worker.shutdown()
        #expect(created.withLock { $0 } == perLane * Self.threads)
        #expect(worker.queueDepth == 0)

        // Every lane refuses work now.
        for lane in worker.lanes {
            let refusal = try waitForResult { done in worker.perform(on: lane, { _ in 1 }, then: done) }
            #expect((refusal.failure as? DatabaseWorkerError) == .shutDown)
        }
        #expect(throws: DatabaseWorkerError.shutDown) { try worker.performAndWait { _ in 1 } }
        worker.shutdown()  // again: returns at once

        let players = try harness.data.database().prepare("SELECT count(*) FROM players").query { $0.int(at: 0) }.first
        #expect(players == perLane * Self.threads)
    }

    @Test func aStoreThatCannotMigrateStartsNoThread() throws {
        let data = try TemporaryDataFolder()
        var configuration = data.configuration()
        configuration.storageThreads = Self.threads
        configuration.migrationsPath = data.url.appendingPathComponent("no-migrations").path
        #expect(throws: MigrationError.self) {
            _ = try DatabaseWorker(configuration: configuration, mailbox: ServiceMailbox())
        }
    }

    // MARK: - Waiting for a completion

    /// Runs `submit`, whose completion (posted to the harness's service thread) is `done`, and
    /// waits up to 10 s for it.
    private func waitForResult<T: Sendable>(
        _ submit: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) throws -> Result<T, any Error> {
        let answer = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        submit { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 10) == .success, "no completion within 10 s")
        return try #require(answer.withLock { $0 })
    }

    private func waitFor<T: Sendable>(
        _ submit: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) throws -> T {
        try waitForResult(submit).get()
    }
}

extension TemporaryDataFolder {
    /// A connection of the test's own to the database file.
    func database() throws -> Database {
        try Database(path: configuration().databasePath)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
