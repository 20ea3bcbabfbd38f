#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets

/// Microseconds on the monotonic clock: what every game deadline is measured in. Never the
/// wall clock, which jumps when it is set.
public enum MonotonicClock {
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
    }
}

/// One libwebsockets timer (`lws_sul_schedule`) driving every game: it sleeps until the
/// earliest bucket of its `TickSchedule` is due, calls `onDue` for each id in it, and sleeps
/// again until the next.
///
/// Threading rule: service thread only, like every libwebsockets call but one. `attach` runs
/// when the protocol is initialised (LWS_CALLBACK_PROTOCOL_INIT) and `detach` when it is
/// destroyed, before the context frees its timer lists; the timer's callback runs on the
/// service thread from inside `lws_service`.
public final class TickScheduler {
    // Its state is unchecked for exclusivity: every frame passes here several times, and no
    // access overlaps another (`fire` takes the due ids before it calls `onDue`, which may
    // schedule again), so swift_beginAccess per access would only cost.
    /// Called for each id whose deadline has come, with the time it was taken at.
    @exclusivity(unchecked) public var onDue: (_ id: Int, _ now: Int64) -> Void = { _, _ in }
    /// Called once after each batch of `onDue` calls (to flush counters once, not per game).
    @exclusivity(unchecked) public var afterDue: () -> Void = {}
    @exclusivity(unchecked) public private(set) var schedule: TickSchedule
    /// The ids taken at the last fire, kept for its capacity: a fire allocates nothing.
    @exclusivity(unchecked) private var due: [Int] = []
    private let clock: () -> Int64
    /// C memory libwebsockets links into its timer list: the `lws_sorted_usec_list_t` first,
    /// then an unretained pointer back to this object. Its address never changes.
    private let timer: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var context: OpaquePointer?
    /// The deadline the timer is set for, if it is set.
    @exclusivity(unchecked) private var armedFor: Int64?
    @exclusivity(unchecked) private var firing = false
    /// When set, the timer is always armed at most this far ahead, even with nothing
    /// scheduled. Needed with libev: libwebsockets 4.1.6 drives every lws_sul from one libev
    /// timer and re-aims it with ev_timer_set/ev_timer_start, which do nothing to a timer that
    /// is already running; so a deadline added from a socket callback (a game started) cannot
    /// move that timer earlier, and waits for whatever it was set to (an internal timeout
    /// seconds away). Steps then went out only when other traffic woke the loop: p99 jitter
    /// 49 ms with 200 games. Kept armed at most 50 ms ahead, the timer always comes back before
    /// any deadline a callback adds (a first step is a whole interval away, a held crash step
    /// 100 ms or more), and an idle server wakes 20 times a second (docs/BENCHMARKS.md).
    private let maximumSleep: Int64?

    public init(granularityMicroseconds: Int64 = 1000, maximumSleepMicroseconds: Int64? = nil,
                clock: @escaping () -> Int64 = MonotonicClock.now) {
        schedule = TickSchedule(granularityMicroseconds: granularityMicroseconds)
        maximumSleep = maximumSleepMicroseconds
        self.clock = clock
        let size = MemoryLayout<lws_sorted_usec_list_t>.stride + MemoryLayout<UnsafeRawPointer>.stride
        timer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        timer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    }

    deinit {
        // Still attached means libwebsockets may hold the timer in its list: leaking a few
        // bytes is better than freeing memory it may still read.
        if context == nil { timer.deallocate() }
    }

    private var sul: UnsafeMutablePointer<lws_sorted_usec_list_t> {
        timer.assumingMemoryBound(to: lws_sorted_usec_list_t.self)
    }

    /// Starts using `context`'s timers (service thread, LWS_CALLBACK_PROTOCOL_INIT).
    public func attach(context: OpaquePointer) {
        self.context = context
        timer.storeBytes(of: Unmanaged.passUnretained(self).toOpaque(),
                         toByteOffset: MemoryLayout<lws_sorted_usec_list_t>.stride, as: UnsafeMutableRawPointer.self)
        rearm()
    }

    /// Cancels the timer; the schedule is kept (service thread, LWS_CALLBACK_PROTOCOL_DESTROY).
    public func detach() {
        if context != nil { lws_sul_cancel(sul) }
        context = nil
        armedFor = nil
    }

    public func schedule(_ id: Int, at deadline: Int64) {
        schedule.schedule(id, at: deadline)
        rearm()
    }

    public func cancel(_ id: Int) {
        schedule.cancel(id)  // the timer may fire for nothing once; cheaper than re-arming
    }

    /// The timer went off (from `lws_service`).
    fileprivate func fire() {
        armedFor = nil
        firing = true
        let now = clock()
        // Out of `self` while `onDue` runs (it schedules again); the closure read once, not per id.
        var due = self.due
        self.due = []
        due.removeAll(keepingCapacity: true)
        schedule.takeDue(now: now, into: &due)
        let onDue = self.onDue
        for id in due { onDue(id, now) }
        self.due = due
        afterDue()
        firing = false
        rearm()
    }

    /// Sets the timer for the earliest bucket, unless it is set for that or earlier already.
    private func rearm() {
        guard !firing, let context else { return }
        let nextDue = schedule.nextDue
        // Set for that or earlier already: nothing to do, and no need to read the clock (the
        // timer was set at most `maximumSleep` after a now that has passed).
        if let armedFor, nextDue.map({ armedFor <= $0 }) ?? true { return }
        let now = clock()
        // With a maximum sleep the timer keeps ticking when idle too (see `maximumSleep`).
        guard var next = nextDue ?? maximumSleep.map({ now + $0 }) else { return }
        if let maximumSleep { next = min(next, now + maximumSleep) }
        if let armedFor, armedFor <= next { return }
        armedFor = next
        // lws_sul_schedule takes a delay from its own now; the deadline itself is absolute.
        lws_sul_schedule(context, 0, sul, tickSchedulerTimerFired, max(0, next - now))
    }
}

/// The timer's C callback: finds its `TickScheduler` behind the `lws_sorted_usec_list_t`.
/// Service thread (called from `lws_service`).
private func tickSchedulerTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul else { return }
    let owner = UnsafeRawPointer(sul).load(fromByteOffset: MemoryLayout<lws_sorted_usec_list_t>.stride,
                                           as: UnsafeRawPointer.self)
    Unmanaged<TickScheduler>.fromOpaque(owner).takeUnretainedValue().fire()
}
