import RetroRapidLWS
import Synchronization

/// The one way into the libwebsockets service thread from any other thread.
///
/// Threading rule (docs/ARCHITECTURE.md): every socket, every HTTP exchange and every running game belongs
/// to the service thread, and only that thread may call libwebsockets, with one exception:
/// `lws_cancel_service`, which wakes the thread from `lws_service`. So another thread (the
/// storage thread with a query's result, a signal handler asking to shut down) never touches a
/// connection itself: it posts a job here. `post` appends the job under a mutex and wakes the
/// service thread; the service thread runs the jobs, in the order they were posted, when
/// libwebsockets delivers `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
///
/// libwebsockets delivers that reason to every protocol of every vhost, so it is drained in one
/// place only: the callback of `protocols[0]` (`lwsHTTPCallback`). Other protocols' callbacks
/// (the WebSocket game protocol) must ignore it.
///
/// Jobs posted while no context is attached (before the server starts, or after it stopped)
/// wait for the next context; the last drain before a context is destroyed runs everything
/// posted until then, so no completion is lost while the service thread still exists.
/// A job must not block: it runs on the thread that serves every connection.
public final class ServiceMailbox: Sendable {
    public typealias Job = @Sendable () -> Void

    private let state = Mutex(State())

    private struct State {
        var jobs: [Job] = []
        /// Wakes the context; nil while none exists. Set and cleared by the service thread.
        var waker: LWSNativeContext.Waker?
        /// A wake-up is on its way (saves a syscall per post when many arrive at once).
        var wakeupPending = false
    }

    public init() {}

    /// Runs `job` on the service thread, after every job posted before it. Any thread.
    public func post(_ job: @escaping Job) {
        state.withLock { state in
            state.jobs.append(job)
            // Under the lock, so the wake-up never races the context's destroy (`detach`).
            guard !state.wakeupPending, let waker = state.waker else { return }
            state.wakeupPending = true
            waker.wake()
        }
    }

    /// Jobs posted and not yet run.
    public var pendingCount: Int {
        state.withLock { $0.jobs.count }
    }

    // MARK: - Service thread only

    /// Called by the service thread once its context exists: later posts wake it, and jobs
    /// that were waiting are run at the next wake-up (asked for here).
    func attach(_ waker: LWSNativeContext.Waker) {
        state.withLock { state in
            state.waker = waker
            state.wakeupPending = !state.jobs.isEmpty
            if state.wakeupPending { waker.wake() }
        }
    }

    /// Called by the service thread before it destroys its context: from here on nobody
    /// calls `lws_cancel_service` on it.
    func detach() {
        state.withLock { state in
            state.waker = nil
            state.wakeupPending = false
        }
    }

    /// Runs the jobs posted so far, in order. Jobs they post run at the next wake-up, so a job
    /// that keeps posting cannot starve the sockets. Service thread only (LWS_CALLBACK_EVENT_WAIT_CANCELLED).
    func drain() {
        let batch: [Job] = state.withLock { state in
            state.wakeupPending = false
            var taken: [Job] = []
            swap(&taken, &state.jobs)
            return taken
        }
        for job in batch { job() }
    }

    /// Runs jobs until none is left, for the last moments of a context (its sockets still
    /// open) so completions posted during shutdown are not lost. Bounded in rounds, so a job
    /// that re-posts itself for ever cannot stop the server from stopping.
    func drainAll(maximumRounds: Int = 1000) {
        for _ in 0..<maximumRounds where pendingCount > 0 {
            drain()
        }
    }
}
