import RetroRapidLWS

/// The service thread's deadlines besides the matches' steps. Each owner registers its own
/// timer with what it does (`register`) and schedules it (`schedule`): the watchers' counts
/// (`WatchHost`), the cluster's heartbeat, sweep and waits (`GameHandoff`), the checkpoint
/// slices and the shutdown's flush (`MatchHost`). The one `TickScheduler` they share with the
/// matches hands every id below zero here (`fire`), and so knows nothing of what each is for.
///
/// Threading rule: service thread only; the scheduler fires from `lws_service`.
final class ServiceTimers {
    /// The timers, by the scheduler id each has (match ids are positive).
    enum Timer: Int, CaseIterable {
        case shutdown = -1
        case checkpoint = -2
        case cluster = -3
        case watchers = -4
    }

    private let scheduler: TickScheduler
    private var handlers: [Int: (_ now: Int64) -> Void] = [:]

    init(scheduler: TickScheduler) {
        self.scheduler = scheduler
    }

    /// `handler` runs when `timer` is due, with the time it was taken at. One owner a timer.
    func register(_ timer: Timer, _ handler: @escaping (_ now: Int64) -> Void) {
        precondition(handlers[timer.rawValue] == nil, "\(timer) has an owner already")
        handlers[timer.rawValue] = handler
    }

    func schedule(_ timer: Timer, at deadline: Int64) {
        scheduler.schedule(timer.rawValue, at: deadline)
    }

    func cancel(_ timer: Timer) {
        scheduler.cancel(timer.rawValue)
    }

    /// Whether the scheduler id is one of these timers' rather than a match's.
    @inline(__always)
    static func owns(_ id: Int) -> Bool { id < 0 }

    /// The scheduler says `id` (one of these) is due.
    func fire(_ id: Int, now: Int64) {
        handlers[id]?(now)
    }
}
