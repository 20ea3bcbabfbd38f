import Foundation
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

/// The thread check of `StorageContext`: every access from another thread reaches
/// `offThreadAccess`, which traps in the server; here a recorder stands in for the trap.
@Suite("StorageContext")
struct StorageContextTests {
    /// Hands the context to another thread; the point of the test is to break its rule.
    private final class Smuggled: @unchecked Sendable {
        let storage: StorageContext
        init(_ storage: StorageContext) { self.storage = storage }
    }

    private static func context(in data: TemporaryDataFolder) throws -> StorageContext {
        let configuration = data.configuration()
        let connection = try StorageFactory.open(path: configuration.databasePath,
                                                 migrationsPath: configuration.migrationsPath, ifMissing: .create)
        return StorageContext(connection: connection, configuration: configuration, clock: { Date() })
    }

    @Test func everyAccessOffTheThreadThatMadeItIsCaught() throws {
        let data = try TemporaryDataFolder()
        let storage = try Self.context(in: data)
        let caught = Mutex<Int>(0)
        storage.offThreadAccess = { caught.withLock { $0 += 1 } }

        // On its own thread: nothing is caught.
        _ = storage.players
        _ = storage.quota
        _ = storage.connection
        _ = storage.repositories
        _ = storage.webhook
        _ = storage.now
        storage.assertOnStorageThread()
        #expect(caught.withLock { $0 } == 0)

        // From another thread: every access is, the dynamic-member ones (`players`, `quota`)
        // included.
        let smuggled = Smuggled(storage)
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = smuggled.storage.players
            _ = smuggled.storage.quota
            _ = smuggled.storage.connection
            _ = smuggled.storage.repositories
            _ = smuggled.storage.webhook
            _ = smuggled.storage.now
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(caught.withLock { $0 } == 6)
    }
}
