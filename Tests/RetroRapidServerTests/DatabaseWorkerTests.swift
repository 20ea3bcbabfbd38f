import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

/// A temporary folder for a database file, removed on deinit.
final class TemporaryDataFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("retrorapid-data-\(UUID().uuidString)", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A configuration whose database lives in this folder (in a subfolder that does not exist
    /// yet) and whose migrations are the repository's own.
    func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.databasePath = url.appendingPathComponent("nested/rr.sqlite").path
        configuration.migrationsPath = TemporaryDataFolder.migrationsPath
        return configuration
    }

    /// `Migrations/` of this checkout, found from this file's path so the tests do not depend
    /// on the working directory.
    static let migrationsPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path
}

/// A running service thread (a bare context) with its mailbox, and a worker posting to it.
final class WorkerHarness {
    let data: TemporaryDataFolder
    let webRoot: TemporaryWebRoot
    let mailbox = ServiceMailbox()
    let context: LWSContext
    let worker: DatabaseWorker

    init(threads: Int = 1) throws {
        data = try TemporaryDataFolder()
        webRoot = try TemporaryWebRoot()
        context = LWSContext(options: LWSContextOptions(
            address: "127.0.0.1", port: 0, mounts: [], responseHeaders: [],
            httpHandler: { _, responder in responder.respond(.json("{}")) }), mailbox: mailbox)
        _ = try context.start()
        var configuration = data.configuration()
        configuration.storageThreads = threads
        worker = try DatabaseWorker(configuration: configuration, mailbox: mailbox)
    }

    deinit {
        worker.shutdown()
        context.stop()
    }
}

@Suite("DatabaseWorker")
struct DatabaseWorkerTests {
    @Test func openingCreatesTheFolderAndMigrates() throws {
        let harness = try WorkerHarness()
        let migrations = try FileManager.default.contentsOfDirectory(atPath: TemporaryDataFolder.migrationsPath)
            .filter { $0.hasSuffix(".sql") }
        #expect(harness.worker.appliedMigrations.count == migrations.count)
        #expect(FileManager.default.fileExists(atPath: harness.data.configuration().databasePath))
    }

    @Test func workRunsOnTheStorageThreadAndItsCompletionOnTheServiceThread() throws {
        let harness = try WorkerHarness()
        let context = harness.context
        let seen = Mutex<(workOnService: Bool, completionOnService: Bool, players: Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        harness.worker.perform({ storage -> (Bool, Int) in
            storage.assertOnStorageThread()
            let created = try storage.players.createPlayer(displayName: "Ada", deviceLabel: "test", now: storage.now)
            return (context.isServiceThread, created.player.displayName == "Ada" ? 1 : 0)
        }, then: { result in
            let (workOnService, players) = (try? result.get()) ?? (true, 0)
            seen.withLock { $0 = (workOnService, context.isServiceThread, players) }
            done.signal()
        })
        #expect(done.wait(timeout: .now() + 5) == .success)
        let result = try #require(seen.withLock { $0 })
        #expect(result.workOnService == false)
        #expect(result.completionOnService == true)
        #expect(result.players == 1)
    }

    @Test func aThrowingJobHandsItsErrorToTheCompletion() throws {
        let harness = try WorkerHarness()
        let error = Mutex<StoreError?>(nil)
        let done = DispatchSemaphore(value: 0)
        harness.worker.perform({ storage in
            try storage.players.player(id: 4242)
        }, then: { result in
            if case .failure(let failure as StoreError) = result { error.withLock { $0 = failure } }
            done.signal()
        })
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(error.withLock { $0 }?.code == .notFound)
    }

    @Test func performAndWaitRunsOnTheStorageThreadAfterQueuedWorkAndReturnsOrThrows() throws {
        let harness = try WorkerHarness()
        let context = harness.context
        let worked = Mutex<[Int]>([])
        harness.worker.perform({ _ in worked.withLock { $0.append(1) } }, then: { _ in })
        let answer = try harness.worker.performAndWait { storage -> Bool in
            storage.assertOnStorageThread()
            worked.withLock { $0.append(2) }
            return context.isServiceThread
        }
        #expect(answer == false)
        #expect(worked.withLock { $0 } == [1, 2])
        let error = #expect(throws: StoreError.self) { try harness.worker.performAndWait { storage in try storage.players.player(id: 4242) } }
        #expect(error?.code == .notFound)
        harness.worker.shutdown()
        #expect(throws: DatabaseWorkerError.shutDown) { try harness.worker.performAndWait { _ in 1 } }
    }

    @Test func jobsAndCompletionsKeepTheOrderTheyWereSubmittedIn() throws {
        let harness = try WorkerHarness()
        let worked = Mutex<[Int]>([])
        let completed = Mutex<[Int]>([])
        let group = DispatchGroup()
        for index in 0..<300 {
            group.enter()
            harness.worker.perform({ _ in
                worked.withLock { $0.append(index) }
                return index
            }, then: { result in
                completed.withLock { $0.append((try? result.get()) ?? -1) }
                group.leave()
            })
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(worked.withLock { $0 } == Array(0..<300))
        #expect(completed.withLock { $0 } == Array(0..<300))
    }

    @Test func shutdownFinishesQueuedJobsThenRefusesNewOnes() throws {
        let harness = try WorkerHarness()
        let release = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        // The first job holds the storage thread, so the rest are certainly still queued.
        harness.worker.perform({ _ in release.wait() }, then: { _ in })
        for _ in 0..<50 {
            harness.worker.perform({ storage in
                _ = try storage.players.createPlayer(displayName: nil, deviceLabel: "", now: storage.now)
                ran.withLock { $0 += 1 }
            }, then: { _ in })
        }
        #expect(harness.worker.queueDepth >= 50)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { release.signal() }
        harness.worker.shutdown()
        #expect(ran.withLock { $0 } == 50)
        #expect(harness.worker.queueDepth == 0)

        let refusal = Mutex<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        harness.worker.perform({ _ in 1 }, then: { result in
            if case .failure(let error) = result { refusal.withLock { $0 = error } }
            done.signal()
        })
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(refusal.withLock { $0 } as? DatabaseWorkerError == .shutDown)

        // Every player the queued jobs created was committed before the database closed.
        let database = try Database(path: harness.data.configuration().databasePath)
        let players = try database.prepare("SELECT count(*) FROM players").query { $0.int(at: 0) }.first
        #expect(players == 50)
    }

    @Test func shutdownIsSafeFromManyThreadsAndMoreThanOnce() throws {
        let harness = try WorkerHarness()
        let worker = harness.worker
        DispatchQueue.concurrentPerform(iterations: 6) { _ in worker.shutdown() }
        worker.shutdown()
    }

    @Test func aMissingMigrationsFolderIsAnErrorAtStart() throws {
        let data = try TemporaryDataFolder()
        var configuration = data.configuration()
        configuration.migrationsPath = data.url.appendingPathComponent("no-migrations").path
        #expect(throws: MigrationError.self) {
            _ = try DatabaseWorker(configuration: configuration, mailbox: ServiceMailbox())
        }
    }
}
