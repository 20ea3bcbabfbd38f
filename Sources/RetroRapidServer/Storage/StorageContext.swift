#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// One storage thread's connection to the store and a repository for each concept, as that
/// thread's work sees them. It names no backend: `StorageFactory` opened the connection.
///
/// Threading rule: a `StorageContext` lives and dies on one of the `DatabaseWorker`'s threads,
/// which made it; each thread has its own. It is deliberately not `Sendable` (nor is a
/// `StorageConnection`), so the compiler keeps it from leaking into another thread's closure;
/// `DatabaseWorker.perform` hands it only to work running on its thread, and every access
/// (`connection`, `repositories`, `webhook`, `now` and each `storage.players`-style member)
/// checks that it is. The check is a thread-id compare; it runs on the storage threads, never
/// on the service thread's per-frame path.
@dynamicMemberLookup
public final class StorageContext {
    public var connection: any StorageConnection {
        assertOnStorageThread()
        return ownConnection
    }
    /// A repository for each concept; read as `storage.players`, `storage.quota`, ….
    public var repositories: StorageRepositories {
        assertOnStorageThread()
        return ownRepositories
    }
    public var webhook: PaymentWebhook {
        assertOnStorageThread()
        return ownWebhook
    }

    private let ownConnection: any StorageConnection
    private let ownRepositories: StorageRepositories
    private let ownWebhook: PaymentWebhook
    /// The time the work should act at; tests move it.
    private let clock: @Sendable () -> Date
    private let thread: pthread_t
    /// What an access off the thread does: trap. Tests put a recorder here to see the check
    /// fire without ending the test process.
    var offThreadAccess: () -> Void = { preconditionFailure("StorageContext used off the storage thread") }

    /// Builds the repositories from the configuration. On the storage thread.
    /// - Parameter checkpointProcess: the cluster node's process, whose round checkpoints go as slices.
    init(connection: any StorageConnection, configuration: ServerConfiguration, clock: @escaping @Sendable () -> Date,
         checkpointProcess: String? = nil) {
        ownConnection = connection
        self.clock = clock
        self.thread = pthread_self()
        ownRepositories = connection.repositories(RepositorySettings(
            dailyFreePlays: configuration.dailyFreePlays,
            basePrice: Money(minorUnits: Int64(configuration.unlimitedPriceMinorUnits), currency: configuration.currency),
            checkpointProcess: checkpointProcess))
        ownWebhook = PaymentWebhook(events: ownRepositories.paymentEvents, secret: configuration.webhookSecret ?? "")
    }

    /// `storage.players` and the like: the repository of that name.
    public subscript<Repository>(dynamicMember keyPath: KeyPath<StorageRepositories, Repository>) -> Repository {
        assertOnStorageThread()
        return ownRepositories[keyPath: keyPath]
    }

    /// Now, by the worker's clock. Work takes it once and passes it to every repository call,
    /// so one request sees one instant.
    public var now: Date {
        assertOnStorageThread()
        return clock()
    }

    /// Traps when called off the thread that made this context (another storage thread
    /// included): a `Database` used from two threads at once is
    /// undefined behaviour (SQLite's NOMUTEX mode, say), so this must fail loudly, not sometimes.
    public func assertOnStorageThread() {
        if pthread_equal(thread, pthread_self()) == 0 {
            offThreadAccess()
        }
    }
}
