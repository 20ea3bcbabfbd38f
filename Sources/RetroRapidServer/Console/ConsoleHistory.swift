import Dispatch
import Foundation
import Synchronization

/// The console overview's charts: this node's own counters sampled once a minute, kept in
/// memory for a day (1,440 samples of three numbers; a restart starts them again), read as the
/// last hour by minute and the last day by hour.
///
/// Threading: `record` runs on the game's service thread (where the counters are read, as a
/// scrape reads them); the sampling timer fires on a Dispatch queue and only posts there;
/// reads from any thread (one lock).
final class ConsoleHistory: Sendable {
    struct Sample: Sendable, Equatable {
        let at: Date
        let gamesRunning: Int
        let gameConnections: Int
        /// The node's games ended since it started (a counter: the charts use its differences).
        let gamesEndedTotal: Int
    }

    struct Minute: Encodable, Equatable {
        let at: Date
        let gamesRunning: Int
        let gameConnections: Int
        /// Games ended since the sample before.
        let gamesEnded: Int
    }

    struct Hour: Encodable, Equatable {
        /// The hour's start (UTC).
        let at: Date
        let mostGamesRunning: Int
        let mostGameConnections: Int
        let gamesEnded: Int
    }

    static let interval: TimeInterval = 60
    static let kept = 24 * 60

    private let samples = Mutex<[Sample]>([])
    /// A Dispatch source may be cancelled from any thread; the box only carries it across.
    private final class TimerBox: @unchecked Sendable {
        let source: any DispatchSourceTimer
        init(_ source: any DispatchSourceTimer) { self.source = source }
    }
    private let timer = Mutex<TimerBox?>(nil)

    func record(_ sample: Sample) {
        samples.withLock { samples in
            samples.append(sample)
            if samples.count > Self.kept { samples.removeFirst(samples.count - Self.kept) }
        }
    }

    /// The last hour, a point a minute (the first sample kept has nothing before it: 0 ended).
    var lastHour: [Minute] {
        let all = samples.withLock { $0 }
        return (max(0, all.count - 60)..<all.count).map { index in
            let sample = all[index]
            let ended = index > 0 ? max(0, sample.gamesEndedTotal - all[index - 1].gamesEndedTotal) : 0
            return Minute(at: sample.at, gamesRunning: sample.gamesRunning, gameConnections: sample.gameConnections,
                          gamesEnded: ended)
        }
    }

    /// The last day, a point an hour (UTC hours), oldest first.
    var lastDay: [Hour] {
        let all = samples.withLock { $0 }
        var hours: [Hour] = []
        var previousTotal: Int?
        for sample in all {
            let start = Date(timeIntervalSince1970: (sample.at.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
            let ended = previousTotal.map { max(0, sample.gamesEndedTotal - $0) } ?? 0
            previousTotal = sample.gamesEndedTotal
            if let last = hours.last, last.at == start {
                hours[hours.count - 1] = Hour(at: start, mostGamesRunning: max(last.mostGamesRunning, sample.gamesRunning),
                                              mostGameConnections: max(last.mostGameConnections, sample.gameConnections),
                                              gamesEnded: last.gamesEnded + ended)
            } else {
                hours.append(Hour(at: start, mostGamesRunning: sample.gamesRunning, mostGameConnections: sample.gameConnections,
                                  gamesEnded: ended))
            }
        }
        return Array(hours.suffix(24))
    }

    /// Samples now and then every minute until `stop`: `sample` is posted to `mailbox` and runs
    /// on its thread.
    func start(posting sample: @escaping @Sendable () -> Void, to mailbox: ServiceMailbox) {
        let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        source.schedule(deadline: .now(), repeating: Self.interval)
        source.setEventHandler { mailbox.post(sample) }
        source.resume()
        let box = TimerBox(source)
        timer.withLock { $0 = box }
    }

    func stop() {
        timer.withLock { timer in
            timer?.source.cancel()
            timer = nil
        }
    }
}
