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

/// Owns the server's connections to the store, each on a storage thread of its own
/// (docs/ARCHITECTURE.md, "Threads and who owns what").
///
/// Threading rule: `init` starts `configuration.storageThreads` threads (1 by default). The
/// first opens the store and migrates it; only then do the others open their connections, so
/// the migrations run once. Each thread owns its connection and the `StorageContext` on it, runs
/// the jobs of its queue one at a time in the order they were queued, and closes its
/// connection at the end. No other thread touches a connection. Results go back through the
/// `ServiceMailbox`, so every completion runs on the libwebsockets service thread, which never
/// waits on storage: `perform` only appends to a queue. Dedicated threads (not a global
/// dispatch queue) because storage calls block (SQLite's fsync and busy waits, a database
/// server's round trips) and would otherwise hold the pool's few threads.
///
/// Ordering rule: a job runs on one `Lane` (one thread). Jobs on the same lane run in the order
/// submitted, and their completions reach the service thread in that order; jobs on different
/// lanes run at the same time, so only the store's transactions order them. `perform(orderedBy:)`
/// picks the lane from a key (the game side passes the player's row id, so one player's game
/// start, checkpoints, cancel and record keep their order); plain `perform` and
/// `performAndWait` use the `serialLane`, so all of that work keeps the order it had with one
/// thread. With one thread every lane is the same, and everything runs in submission order.
///
/// Group commit (docs/ARCHITECTURE.md, "Group commit"): keyed jobs waiting next to each other
/// on a lane run in one transaction, each in its own savepoint, and their completions are
/// posted, in order, only after its commit; that keeps both orders above.
public final class DatabaseWorker: Sendable {
    /// One storage thread and its queue, as a job's destination.
    public struct Lane: Hashable, Sendable {
        /// 0 ..< `threadCount`.
        public let index: Int
    }

    /// Migrations the worker applied when it opened the database (empty when up to date).
    public let appliedMigrations: [AppliedMigration]
    /// How many storage threads run (`ServerConfiguration.storageThreads`).
    public let threadCount: Int

    private let mailbox: ServiceMailbox
    /// One per thread, by lane index.
    private let queues: [StorageJobQueue]
    private let threads = Mutex<[ThreadHandle]>([])

    /// `pthread_t` is an integer on Linux and a pointer on Darwin; either way it is joined or
    /// detached once, under the lock.
    private struct ThreadHandle: @unchecked Sendable {
        let thread: pthread_t
    }

    /// Starts the storage threads, the first of which opens the store the configuration names
    /// through `StorageFactory` (creating a missing file and its folders) and applies its
    /// migrations; then the others open theirs, one after another. Returns once all are open;
    /// throws what went wrong (every thread started has then ended).
    ///
    /// - Parameters:
    ///   - clock: what `StorageContext.now` reads; tests move time with it.
    ///   - checkpointProcess: a cluster node's process name (`ClusterMembership.instance`),
    ///     whose round checkpoints PostgreSQL keeps as slices; nil for a single node.
    public init(configuration: ServerConfiguration, mailbox: ServiceMailbox,
                clock: @escaping @Sendable () -> Date = { Date() }, checkpointProcess: String? = nil) throws {
        self.mailbox = mailbox
        let count = max(1, configuration.storageThreads)
        let queues = (0..<count).map { _ in StorageJobQueue() }
        var started: [ThreadHandle] = []
        var applied: [AppliedMigration] = []
        do {
            for index in 0..<count {
                let body = StorageThread(configuration: configuration, clock: clock, checkpointProcess: checkpointProcess,
                                         queue: queues[index],
                                         name: index == 0 ? "rr-storage" : "rr-storage-\(index)", migrates: index == 0)
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
                case .success(let migrations):
                    if index == 0 { applied = migrations }
                }
                started.append(ThreadHandle(thread: thread))
            }
        } catch {
            // The threads already open end after their (empty) queues; none has had work.
            for queue in queues { queue.close() }
            for handle in started { pthread_join(handle.thread, nil) }
            throw error
        }
        self.queues = queues
        threadCount = count
        appliedMigrations = applied
        threads.withLock { $0 = started }
    }

    deinit {
        // Forgotten without shutdown(): let the threads finish their queues and end on their own.
        for queue in queues { queue.close() }
        for handle in threads.withLock({ $0 }) { pthread_detach(handle.thread) }
    }

    /// Every lane, by index: a job split by lane (`CheckpointWriter`) goes through these.
    public var lanes: [Lane] {
        (0..<threadCount).map(Lane.init(index:))
    }

    /// The lane of work with no key of its own: the API, sign-ins, start-up. Such work keeps
    /// its order with one thread or many.
    public var serialLane: Lane {
        Lane(index: 0)
    }

    /// The lane every job with this key runs on. Player row ids count up from 1, so taking
    /// them modulo the thread count spreads players evenly.
    public func lane(orderedBy key: Int64) -> Lane {
        Lane(index: Int(UInt64(bitPattern: key) % UInt64(threadCount)))
    }

    /// Runs `work` on the serial lane, after everything submitted to it before, and then
    /// `completion` with its result on the service thread. Any thread; never blocks.
    /// After `shutdown()`, `completion` gets `DatabaseWorkerError.shutDown`.
    public func perform<T: Sendable>(
        _ work: @escaping @Sendable (StorageContext) throws -> T,
        then completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        perform(on: serialLane, work, then: completion)
    }

    /// Like `perform`, on the lane of `key`: after every job submitted before with the same
    /// key, never at the same time as one of them.
    ///
    /// Group commit: a keyed job (a game's start, checkpoint, cancel, record, the cluster's
    /// claims and releases of it) may share one transaction with the keyed jobs queued next to
    /// it on its lane (`StorageThread`); its completion still comes only after that
    /// transaction commits. So its `work` must only read and write the store through the
    /// context: if the shared transaction fails as a whole it runs again, alone.
    public func perform<T: Sendable>(
        orderedBy key: Int64,
        _ work: @escaping @Sendable (StorageContext) throws -> T,
        then completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        perform(on: lane(orderedBy: key), groupable: true, work, then: completion)
    }

    /// Like `perform`, on `lane`; `groupable` as for `perform(orderedBy:)` (false: the job
    /// runs alone, as every job did before group commit).
    public func perform<T: Sendable>(
        on lane: Lane,
        groupable: Bool = false,
        _ work: @escaping @Sendable (StorageContext) throws -> T,
        then completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let mailbox = self.mailbox
        let value = JobValue<T>()
        let accepted = queues[lane.index].append(StorageJob(groupable: groupable, run: { storage in
            value.value = try work(storage)
        }, answer: { error in
            let result: Result<T, any Error> = error.map { .failure($0) } ?? .success(value.value!)
            mailbox.post { completion(result) }
        }))
        if !accepted {
            mailbox.post { completion(.failure(DatabaseWorkerError.shutDown)) }
        }
    }

    /// Runs `work` on the serial lane, after everything submitted to it before, and waits for
    /// its result. Start-up only (`GameServer.init` on the main thread, before the server
    /// listens): the service thread must never wait on storage, so it uses `perform`.
    public func performAndWait<T: Sendable>(_ work: @escaping @Sendable (StorageContext) throws -> T) throws -> T {
        let answer = WaitedAnswer<T>()
        let accepted = queues[serialLane.index].append(StorageJob(groupable: false, run: { storage in
            answer.value = try work(storage)
        }, answer: { error in
            answer.result = error.map { .failure($0) } ?? .success(answer.value!)
            answer.done.signal()
        }))
        guard accepted else { throw DatabaseWorkerError.shutDown }
        answer.done.wait()
        return try answer.result!.get()
    }

    /// Jobs waiting for a storage thread (not counting those running), all threads together:
    /// `retrorapid_database_queue_depth` on /metrics.
    public var queueDepth: Int {
        queues.reduce(0) { $0 + $1.depth }
    }

    /// Jobs run so far, all threads together (a job run again alone after its group failed
    /// counts once): `retrorapid_database_jobs_total`.
    public var jobsRun: Int {
        queues.reduce(0) { $0 + $1.counts.jobs.load(ordering: .relaxed) }
    }

    /// Shared transactions committed so far (`retrorapid_database_group_commits_total`), and
    /// the jobs they held (`retrorapid_database_grouped_jobs_total`): with `jobsRun`, how many
    /// transactions group commit saved.
    public var groupCommits: (groups: Int, jobs: Int) {
        queues.reduce((0, 0)) { ($0.0 + $1.counts.groups.load(ordering: .relaxed), $0.1 + $1.counts.groupedJobs.load(ordering: .relaxed)) }
    }

    /// Runs every job already queued on every thread (their completions are posted), closes
    /// every connection and joins every thread. Work submitted afterwards fails with
    /// `.shutDown`. Safe to call more than once and from several threads (each returns once
    /// every thread has ended); never from a storage thread itself.
    public func shutdown() {
        for queue in queues { queue.close() }
        // Taking the handles out makes exactly one caller join; the others wait for the queues
        // to report their threads' end.
        let handles = threads.withLock { state -> [ThreadHandle] in defer { state = [] }; return state }
        for handle in handles {
            precondition(pthread_equal(handle.thread, pthread_self()) == 0,
                         "DatabaseWorker.shutdown() called from a storage thread")
        }
        for handle in handles { pthread_join(handle.thread, nil) }
        for queue in queues { queue.waitUntilFinished() }
    }
}

/// The result `performAndWait` waits for: written by the storage thread before it signals
/// `done`, read by the waiting thread after, so the semaphore orders the two.
private final class WaitedAnswer<T: Sendable>: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var value: T?
    var result: Result<T, any Error>?
}

/// What a job's work returned, kept from its run to its answer. Storage thread only (the run
/// and the answer both happen there; the answer posts a copy).
private final class JobValue<T: Sendable>: @unchecked Sendable {
    var value: T?
}

/// One job of a storage thread's queue: its work, and how its answer is posted once the work
/// is committed (alone, or with its group).
private struct StorageJob: Sendable {
    /// May share a transaction with the groupable jobs next to it (`perform(orderedBy:)`).
    let groupable: Bool
    /// The work; keeps its value for `answer`, throws its error.
    let run: @Sendable (StorageContext) throws -> Void
    /// Posts the completion: the kept value (nil) or the error. Called once, after the commit.
    let answer: @Sendable ((any Error)?) -> Void
}

/// What a storage thread counted, for /metrics.
private final class StorageCounts: Sendable {
    let jobs = Atomic<Int>(0)
    let groups = Atomic<Int>(0)
    let groupedJobs = Atomic<Int>(0)
}

/// The jobs waiting for one storage thread. Any thread appends; that storage thread takes.
private final class StorageJobQueue: Sendable {
    typealias Job = StorageJob

    let counts = StorageCounts()

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
    func append(_ job: Job) -> Bool {
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

    /// The next job, or nil once closed with nothing left; when the next is groupable, the
    /// groupable jobs queued right behind it too, up to `limit` in all (never past one that
    /// is not). Storage thread only.
    func next(upTo limit: Int) -> [Job]? {
        while true {
            wakeups.wait()
            let next: [Job]?? = state.withLock { state in
                guard state.head < state.jobs.count else { return state.closing ? .some(nil) : nil }
                var taken = [state.jobs[state.head]]
                state.head += 1
                if taken[0].groupable {
                    while taken.count < limit, state.head < state.jobs.count, state.jobs[state.head].groupable {
                        taken.append(state.jobs[state.head])
                        state.head += 1
                    }
                }
                // Compact now and then rather than shifting the array on every take.
                if state.head >= 64 && state.head * 2 >= state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return .some(taken)
            }
            if let next {
                // One signal per job: take those of the others in the group (each comes right
                // after its job was appended, so these waits are short).
                for _ in 1..<max(1, next?.count ?? 1) { wakeups.wait() }
                return next
            }
        }
    }

    func markFinished() {
        finished.leave()
    }

    func waitUntilFinished() {
        finished.wait()
    }
}

/// What a storage thread runs: open (and, on the first thread, migrate), report, serve jobs
/// until closed, close.
private final class StorageThread: Sendable {
    let configuration: ServerConfiguration
    let clock: @Sendable () -> Date
    let checkpointProcess: String?
    let queue: StorageJobQueue
    let name: String
    /// Only the first thread migrates; the others open the store once it is up to date.
    let migrates: Bool
    let startupDone = DispatchSemaphore(value: 0)
    let startupResult = Mutex<Result<[AppliedMigration], any Error>?>(nil)

    init(configuration: ServerConfiguration, clock: @escaping @Sendable () -> Date, checkpointProcess: String?,
         queue: StorageJobQueue, name: String, migrates: Bool) {
        self.configuration = configuration
        self.clock = clock
        self.checkpointProcess = checkpointProcess
        self.queue = queue
        self.name = name
        self.migrates = migrates
    }

    func run() {
        defer { queue.markFinished() }
        nameCurrentThread(name)
        // Below the service thread: a checkpoint or a group of records must not delay a step
        // on a shared core (docs/BENCHMARKS.md, "Checkpoints in slices").
        lowerCurrentThreadPriority(by: configuration.storageThreadNiceness)
        let storage: StorageContext
        do {
            let connection = try StorageFactory.open(configuration, ifMissing: .create)
            let applied = migrates ? try connection.migrate() : []
            storage = StorageContext(connection: connection, configuration: configuration, clock: clock,
                                     checkpointProcess: checkpointProcess)
            startupResult.withLock { $0 = .success(applied) }
            startupDone.signal()
        } catch {
            startupResult.withLock { $0 = .failure(error) }
            startupDone.signal()
            return
        }
        while let jobs = queue.next(upTo: Self.groupLimit) {
            if jobs.count == 1 { runAlone(jobs[0], storage) } else { runGroup(jobs, storage) }
        }
        // `storage` and its connection are released here, on this thread: the connection closes.
    }

    /// The most jobs one shared transaction holds: enough that a queue of game starts and
    /// records drains in few commits, few enough that a failed group costs little to run again.
    static let groupLimit = 64

    private func runAlone(_ job: StorageJob, _ storage: StorageContext) {
        queue.counts.jobs.add(1, ordering: .relaxed)
        do {
            try job.run(storage)
            job.answer(nil)
        } catch {
            job.answer(error)
        }
    }

    /// Group commit: the jobs in one transaction, each in a savepoint, one commit, and only
    /// then their answers, in order. A job's own error undoes only its work and is its answer;
    /// if the transaction fails as a whole, nothing of it was committed and each job runs
    /// again alone, as it would have without group commit.
    private func runGroup(_ jobs: [StorageJob], _ storage: StorageContext) {
        let errors: [(any Error)?]
        do {
            errors = try storage.connection.commitGroup(jobs.count) { index in try jobs[index].run(storage) }
        } catch {
            for job in jobs { runAlone(job, storage) }
            return
        }
        queue.counts.jobs.add(jobs.count, ordering: .relaxed)
        queue.counts.groups.add(1, ordering: .relaxed)
        queue.counts.groupedJobs.add(jobs.count, ordering: .relaxed)
        for (job, error) in zip(jobs, errors) { job.answer(error) }
    }
}
