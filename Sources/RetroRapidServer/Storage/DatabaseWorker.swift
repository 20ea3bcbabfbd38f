#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidSupport
import Synchronization

/// Why work could not run on the storage thread.
public struct DatabaseWorkerError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String

    /// `perform` after `shutdown()`: the database is closed.
    public static let shutDown = DatabaseWorkerError(description: "The database worker has shut down; the server is stopping.")
    /// The storage thread could not be created.
    public static let threadFailed = DatabaseWorkerError(description: "Could not start the storage thread.")
}

/// Owns the server's one connection to the store on a dedicated thread (docs/ARCHITECTURE.md).
///
/// Threading rule: the storage thread, created by `init`, opens the database, migrates it, runs
/// every job in the order `perform` received them, and closes it. No other thread touches the
/// connection. Results go back through the `ServiceMailbox`, so every completion runs on the
/// libwebsockets service thread, which never waits on storage: `perform` only appends to a
/// queue. A dedicated thread (not a global dispatch queue) because storage calls block (SQLite's
/// fsync and busy waits) and would otherwise hold one of the pool's few threads.
public final class DatabaseWorker: Sendable {
    /// Migrations the worker applied when it opened the database (empty when up to date).
    public let appliedMigrations: [AppliedMigration]

    private let mailbox: ServiceMailbox
    private let queue = StorageJobQueue()
    private let thread = Mutex<ThreadHandle?>(nil)

    /// `pthread_t` is an integer on Linux and a pointer on Darwin; either way it is joined or
    /// detached once, under the lock.
    private struct ThreadHandle: @unchecked Sendable {
        let thread: pthread_t
    }

    /// Starts the storage thread, which opens the store the configuration names through
    /// `StorageFactory` (creating a missing file and its folders) and applies its migrations.
    /// Returns once that is done; throws what went wrong (the thread has then ended).
    ///
    /// - Parameter clock: what `StorageContext.now` reads; tests move time with it.
    public init(configuration: ServerConfiguration, mailbox: ServiceMailbox,
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.mailbox = mailbox
        let body = StorageThread(configuration: configuration, clock: clock, queue: queue)
        let retained = Unmanaged.passRetained(body).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            Unmanaged<StorageThread>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, retained)
        guard created == 0 else {
            Unmanaged<StorageThread>.fromOpaque(retained).release()
            throw DatabaseWorkerError.threadFailed
        }
        body.startupDone.wait()
        switch body.startupResult.withLock({ $0 })! {
        case .failure(let error):
            pthread_join(thread, nil)
            throw error
        case .success(let applied):
            appliedMigrations = applied
        }
        self.thread.withLock { $0 = ThreadHandle(thread: thread) }
    }

    deinit {
        // Forgotten without shutdown(): let the thread finish the queue and end on its own.
        queue.close()
        if let handle = thread.withLock({ $0 }) { pthread_detach(handle.thread) }
    }

    /// Runs `work` on the storage thread, after everything submitted before it, and then
    /// `completion` with its result on the service thread. Any thread; never blocks.
    /// After `shutdown()`, `completion` gets `DatabaseWorkerError.shutDown`.
    public func perform<T: Sendable>(
        _ work: @escaping @Sendable (StorageContext) throws -> T,
        then completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let mailbox = self.mailbox
        let accepted = queue.append { storage in
            let result = Result { try work(storage) }
            mailbox.post { completion(result) }
        }
        if !accepted {
            mailbox.post { completion(.failure(DatabaseWorkerError.shutDown)) }
        }
    }

    /// Runs `work` on the storage thread, after everything submitted before it, and waits for
    /// its result. Start-up only (`GameServer.init` on the main thread, before the server
    /// listens): the service thread must never wait on SQLite, so it uses `perform`.
    public func performAndWait<T: Sendable>(_ work: @escaping @Sendable (StorageContext) throws -> T) throws -> T {
        let answer = WaitedAnswer<T>()
        let accepted = queue.append { storage in
            answer.result = Result { try work(storage) }
            answer.done.signal()
        }
        guard accepted else { throw DatabaseWorkerError.shutDown }
        answer.done.wait()
        return try answer.result!.get()
    }

    /// Jobs waiting for the storage thread (not counting the one running): for /metrics.
    public var queueDepth: Int {
        queue.depth
    }

    /// Runs every job already queued (their completions are posted), closes the database and
    /// joins the thread. Work submitted afterwards fails with `.shutDown`. Safe to call more
    /// than once and from several threads (each returns once the thread has ended); never from
    /// the storage thread itself.
    public func shutdown() {
        queue.close()
        // Taking the handle out makes exactly one caller join; the others wait for the queue
        // to report the thread's end.
        if let handle = thread.withLock({ state -> ThreadHandle? in defer { state = nil }; return state }) {
            precondition(pthread_equal(handle.thread, pthread_self()) == 0,
                         "DatabaseWorker.shutdown() called from the storage thread")
            pthread_join(handle.thread, nil)
        }
        queue.waitUntilFinished()
    }
}

/// The result `performAndWait` waits for: written by the storage thread before it signals
/// `done`, read by the waiting thread after, so the semaphore orders the two.
private final class WaitedAnswer<T: Sendable>: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var result: Result<T, any Error>?
}

/// The jobs waiting for the storage thread. Any thread appends; the storage thread takes.
private final class StorageJobQueue: Sendable {
    typealias Job = @Sendable (StorageContext) -> Void

    private let state = Mutex(State())
    /// One signal per job appended, and one for closing: the storage thread sleeps on it.
    private let wakeups = DispatchSemaphore(value: 0)
    /// Left when the storage thread has ended (and closed the database).
    private let finished = DispatchGroup()

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var closing = false
    }

    init() {
        finished.enter()
    }

    var depth: Int {
        state.withLock { $0.jobs.count - $0.head }
    }

    /// False once closed: the job was not queued.
    func append(_ job: @escaping Job) -> Bool {
        let accepted = state.withLock { state in
            guard !state.closing else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { wakeups.signal() }
        return accepted
    }

    /// No more jobs; the thread ends after those queued.
    func close() {
        let first = state.withLock { state in
            defer { state.closing = true }
            return !state.closing
        }
        if first { wakeups.signal() }
    }

    /// The next job, or nil once closed with nothing left. Storage thread only.
    func next() -> Job? {
        while true {
            wakeups.wait()
            let next: Job?? = state.withLock { state in
                guard state.head < state.jobs.count else { return state.closing ? .some(nil) : nil }
                let job = state.jobs[state.head]
                state.head += 1
                // Compact now and then rather than shifting the array on every take.
                if state.head >= 64 && state.head * 2 >= state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return .some(job)
            }
            if let next { return next }
        }
    }

    func markFinished() {
        finished.leave()
    }

    func waitUntilFinished() {
        finished.wait()
    }
}

/// What the storage thread runs: open and migrate, report, serve jobs until closed, close.
private final class StorageThread: Sendable {
    let configuration: ServerConfiguration
    let clock: @Sendable () -> Date
    let queue: StorageJobQueue
    let startupDone = DispatchSemaphore(value: 0)
    let startupResult = Mutex<Result<[AppliedMigration], any Error>?>(nil)

    init(configuration: ServerConfiguration, clock: @escaping @Sendable () -> Date, queue: StorageJobQueue) {
        self.configuration = configuration
        self.clock = clock
        self.queue = queue
    }

    func run() {
        defer { queue.markFinished() }
        nameCurrentThread("rr-storage")
        let storage: StorageContext
        do {
            let connection = try StorageFactory.open(configuration, ifMissing: .create)
            let applied = try connection.migrate()
            storage = StorageContext(connection: connection, configuration: configuration, clock: clock)
            startupResult.withLock { $0 = .success(applied) }
            startupDone.signal()
        } catch {
            startupResult.withLock { $0 = .failure(error) }
            startupDone.signal()
            return
        }
        while let job = queue.next() {
            job(storage)
        }
        // `storage` and its connection are released here, on this thread: the connection closes.
    }
}
