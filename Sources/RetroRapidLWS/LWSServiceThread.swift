#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import RetroRapidSupport
import Synchronization

/// The one thread that creates, services and destroys a server's `LWSNativeContext`.
///
/// Threading rule: the thread created by `start` makes every libwebsockets call: it creates
/// the context and vhost, runs the loop until stopped, runs every callback, and destroys the
/// context. Any other thread may only call `stop`/`wait`, which wake it with the context's
/// `Waker` (`lws_cancel_service`, the one call libwebsockets allows off the service thread),
/// made under a lock so it never races the destroy.
public final class LWSServiceThread: @unchecked Sendable {
    // @unchecked: `hooks` and `native` are touched only by the service thread (`hooks` also by
    // `start` before the thread exists); everything else shared is a Mutex, Atomic or let.

    /// What the owner does at the thread's turning points, all on the service thread.
    public struct Hooks {
        /// Makes the context (`LWSNativeContext.create`).
        public var create: () -> Result<LWSNativeContext, LWSContextError>
        /// The context exists and the vhost listens; before `start` returns.
        public var started: (LWSNativeContext) -> Void
        /// A stop was asked for and the loop has ended; the context still exists with every
        /// connection (the last mailbox jobs run here), then it is destroyed.
        public var stopping: () -> Void

        public init(create: @escaping () -> Result<LWSNativeContext, LWSContextError>,
                    started: @escaping (LWSNativeContext) -> Void, stopping: @escaping () -> Void) {
            self.create = create
            self.started = started
            self.stopping = stopping
        }
    }

    private let threadName: String
    private var hooks: Hooks?
    /// Service thread only: the context while it exists.
    private var native: LWSNativeContext?
    private let stopRequested = Atomic<Bool>(false)
    private let shared = Mutex(SharedState())
    /// Left when the service thread has destroyed the context and freed its C memory.
    private let finished = DispatchGroup()
    /// Signalled once the service thread knows whether the vhost is listening.
    private let startupDone = DispatchSemaphore(value: 0)

    private struct SharedState {
        var phase = Phase.idle
        /// Set while the context exists, so `stop()` can wake the thread. Cleared by the
        /// service thread, under the lock, before the context is destroyed.
        var waker: LWSNativeContext.Waker?
        /// The service thread, once created; kept after it ends so it can be recognised.
        var thread: pthread_t?
        /// Set by the one caller of `wait()` that joins the thread; the others wait on `finished`.
        var joinClaimed = false
        var startupResult: Result<Int, LWSContextError>?
    }

    private enum Phase { case idle, running, finished }

    /// - Parameter threadName: what `top -H` and `perf` show for the thread.
    public init(threadName: String) {
        self.threadName = threadName
    }

    /// Creates the service thread and blocks until the vhost is listening or has failed.
    /// Returns the bound port (the kernel's choice when the configured port is 0).
    public func start(_ hooks: Hooks) throws(LWSContextError) -> Int {
        LWSLogging.configureOnce()
        let thread: pthread_t? = shared.withLock { state in
            precondition(state.phase == .idle, "LWSServiceThread.start() called twice")
            state.phase = .running
            self.hooks = hooks
            finished.enter()
            var thread = pthread_t()
            // The thread owns one retain of self until it has destroyed the context: callbacks
            // that run during the destroy still find their owner alive (the hooks hold it).
            let retained = Unmanaged.passRetained(self).toOpaque()
            let rc = pthread_create(&thread, nil, { argument in
                let serviceThread = Unmanaged<LWSServiceThread>.fromOpaque(argument!).takeRetainedValue()
                serviceThread.main()
                return nil
            }, retained)
            guard rc == 0 else {
                Unmanaged<LWSServiceThread>.fromOpaque(retained).release()
                self.hooks = nil
                state.phase = .finished
                finished.leave()
                return nil
            }
            state.thread = thread
            return thread
        }
        guard thread != nil else { throw .contextCreationFailed }
        startupDone.wait()
        let result = shared.withLock { $0.startupResult }!
        switch result {
        case .success(let port):
            return port
        case .failure(let error):
            wait()
            throw error
        }
    }

    /// Asks the service loop to end and waits until the context is destroyed. Safe from any
    /// thread, any number of times. Called on the service thread itself (from a callback), it
    /// only asks, because waiting there would deadlock.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        shared.withLock { state in
            state.waker?.wake()
        }
        wait()
    }

    /// Blocks until the service thread has destroyed the context, and joins it. On the service
    /// thread itself it returns at once.
    public func wait() {
        enum Action { case join(pthread_t), waitForFinish, none }
        let action: Action = shared.withLock { state in
            guard let thread = state.thread else { return .waitForFinish }
            if pthread_equal(thread, pthread_self()) != 0 { return .none }
            if state.joinClaimed { return .waitForFinish }
            state.joinClaimed = true
            return .join(thread)
        }
        switch action {
        case .join(let thread): pthread_join(thread, nil)
        case .waitForFinish: finished.wait()
        case .none: break
        }
    }

    /// Whether the calling thread is this service thread.
    public var isServiceThread: Bool {
        shared.withLock { state in
            state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        }
    }

    /// Service thread, from LWS_CALLBACK_EVENT_WAIT_CANCELLED (after the mailbox is drained):
    /// a stop asked for leaves the libev loop (the poll loop checks the flag after each wakeup).
    public func serviceWoken() {
        if stopRequested.load(ordering: .acquiring) { native?.stopLoop() }
    }

    private func main() {
        defer { finished.leave() }
        nameCurrentThread(threadName)
        guard let hooks else { return }
        switch hooks.create() {
        case .failure(let error):
            shared.withLock { state in
                state.startupResult = .failure(error)
                state.phase = .finished
            }
            self.hooks = nil
            startupDone.signal()
        case .success(let context):
            native = context
            hooks.started(context)
            shared.withLock { state in
                state.waker = context.waker
                state.startupResult = .success(context.listenPort ?? 0)
            }
            startupDone.signal()
            while !stopRequested.load(ordering: .acquiring) {
                if !context.run() { break }
            }
            shared.withLock { state in
                state.waker = nil
                state.phase = .finished
            }
            hooks.stopping()
            context.destroy()
            native = nil
            self.hooks = nil  // the owner's closures: no cycle outlives the thread
        }
    }
}
