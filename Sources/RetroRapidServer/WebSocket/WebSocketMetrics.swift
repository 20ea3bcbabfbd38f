#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RetroRapidLWS
import Synchronization

/// The game side's figures in the shared `Metrics` registry (GET /metrics).
///
/// Threading rule: service thread. The hottest counts (messages sent and received, steps and
/// their lateness) add up in plain integers and reach the registry at most every
/// `handOverIntervalMicroseconds` (`flush`, called after each batch of work), not once per message
/// or batch: each registry update takes a lock and a dictionary lookup. A scrape hands them over
/// first (`Metrics.beforeRender`): GET /metrics is answered on the service thread, so it always
/// sees everything counted before it. A `render` on another thread (only tests do that) sees them
/// as of the last hand-over.
final class WebSocketMetrics {
    let connections: Gauge
    let gamesRunning: Gauge
    let errors: Counter
    let gamesEnded: Counter
    /// Connections the server ended because the client did not keep up its side, by reason.
    let dropped: Counter
    private let steps: Counter
    private let checkpoints: Counter
    private let stepLateness: Histogram
    private let received: Counter
    private let sentTotal: Counter
    private let queuedTotal: Counter
    // The counts below are unchecked for exclusivity: each is one integer the service thread
    // adds to (per message, per step) and nothing reads or writes while another access to it is
    // under way, so swift_beginAccess would cost more than the count itself.

    /// Counted since the last hand-over.
    @exclusivity(unchecked) var sent = 0
    /// Of `sent`, the messages that waited in a connection's queue.
    @exclusivity(unchecked) var queued = 0
    @exclusivity(unchecked) var receivedCount = 0

    /// How long counts may wait for the registry when nobody scrapes.
    static let handOverIntervalMicroseconds: Int64 = 100_000
    private let clock: () -> Int64
    @exclusivity(unchecked) private var handedOverAt: Int64?
    /// The thread that counts (the service thread), as of the last `flush`: the one thread a
    /// scrape may hand the counts over from.
    private let countingThread = Atomic<UInt>(0)

    init(_ metrics: Metrics, clock: @escaping () -> Int64 = MonotonicClock.now) {
        self.clock = clock
        connections = metrics.gauge("retrorapid_websocket_connections", help: "Open game connections on /ws.")
        gamesRunning = metrics.gauge("retrorapid_games_running",
                                     help: "Games in progress, including paused ones and those waiting for a player to reconnect.")
        steps = metrics.counter("retrorapid_game_steps_total", help: "Game steps computed, over all games.")
        stepLateness = metrics.histogram(
            "retrorapid_game_step_lateness_seconds",
            help: "How long after its deadline each game step was computed and sent: the server's share of the step jitter players feel. Steady values above a few milliseconds mean the server is overloaded.",
            buckets: Self.latenessBucketsMicroseconds.map { Double($0) / 1_000_000 })
        received = metrics.counter("retrorapid_websocket_messages_received_total", help: "Messages received from game clients.")
        sentTotal = metrics.counter("retrorapid_websocket_messages_sent_total", help: "Messages sent or queued for game clients.")
        queuedTotal = metrics.counter("retrorapid_websocket_messages_queued_total",
                                      help: "Messages that waited in a connection's queue because the socket was still busy with an earlier one (the rest were written at once); a steady rise means clients or the network cannot keep up.")
        errors = metrics.counter("retrorapid_websocket_errors_total", help: "Error messages sent to game clients, by code.",
                                 labelNames: ["code"])
        gamesEnded = metrics.counter("retrorapid_games_ended_total", help: "Games ended, by reason.", labelNames: ["reason"])
        checkpoints = metrics.counter("retrorapid_game_checkpoints_total",
                                      help: "Running games' input logs saved by the periodic checkpoint (one per game that changed, per interval).")
        dropped = metrics.counter("retrorapid_websocket_clients_dropped_total",
                                  help: "Game connections closed because the client did not read (slow_reader) or said nothing in time (hello_timeout, idle_timeout).",
                                  labelNames: ["reason"])
        let scrape = ScrapeHandOver(self)
        metrics.beforeRender { scrape.handOver() }
    }

    /// How late steps were, bucketed here and handed to `stepLateness` on `flush`; its count
    /// is also the steps taken since then (`steps`).
    @exclusivity(unchecked) private var lateness = LocalHistogram(bounds: WebSocketMetrics.latenessBucketsMicroseconds)
    /// From half a millisecond (the tick timer's own grain) to a quarter second (a step
    /// interval at Rapid is 420 ms or less).
    static let latenessBucketsMicroseconds: [Int64] = [500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 250_000]

    func checkpointed(games: Int) {
        checkpoints.increment(by: Double(games))
    }

    func stepTaken(lateMicroseconds: Int64) {
        lateness.record(lateMicroseconds)
    }

    /// Hands the counts to the registry if the last hand-over was `handOverIntervalMicroseconds`
    /// ago or more (called at the end of every batch of work; cheap otherwise).
    func flush() {
        countingThread.store(Self.currentThread(), ordering: .relaxed)
        let now = clock()
        if let handedOverAt, now - handedOverAt < Self.handOverIntervalMicroseconds { return }
        handedOverAt = now
        handOver()
    }

    /// A scrape is about to render (on the thread rendering): the counts go over now, if that
    /// is the thread counting them.
    fileprivate func scrapeBegins() {
        guard countingThread.load(ordering: .relaxed) == Self.currentThread() else { return }
        handOver()
    }

    private static func currentThread() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    private func handOver() {
        if lateness.count > 0 {
            steps.increment(by: Double(lateness.count))
            stepLateness.merge(counts: lateness.counts, sum: Double(lateness.sum) / 1_000_000, count: lateness.count)
            lateness.reset()
        }
        if sent > 0 { sentTotal.increment(by: Double(sent)); sent = 0 }
        if queued > 0 { queuedTotal.increment(by: Double(queued)); queued = 0 }
        if receivedCount > 0 { received.increment(by: Double(receivedCount)); receivedCount = 0 }
    }
}

/// What `Metrics.render` calls into `WebSocketMetrics` through: Sendable as the registry needs,
/// because `WebSocketMetrics.scrapeBegins` touches nothing but an atomic off its own thread.
private final class ScrapeHandOver: @unchecked Sendable {
    private weak var metrics: WebSocketMetrics?

    init(_ metrics: WebSocketMetrics) {
        self.metrics = metrics
    }

    func handOver() {
        metrics?.scrapeBegins()
    }
}

/// Bucket counts kept on one thread without a lock, merged into a `Histogram` in batches.
struct LocalHistogram {
    let bounds: [Int64]
    /// Per bound, values at or below it and above the one before; values above the last
    /// bound are only in `count` and `sum`.
    private(set) var counts: [UInt64]
    private(set) var sum: Int64 = 0
    private(set) var count: UInt64 = 0

    init(bounds: [Int64]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count)
    }

    mutating func record(_ value: Int64) {
        if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
        sum += value
        count += 1
    }

    mutating func reset() {
        for index in counts.indices { counts[index] = 0 }
        sum = 0
        count = 0
    }
}
