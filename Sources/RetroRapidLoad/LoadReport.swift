import Foundation

/// What a load test measured in its window, as text for people and one JSON object for
/// scripts (scripts/bench-capacity.sh takes the median of several).
public struct LoadReport: Sendable {
    public let options: LoadTestOptions
    public let statistics: LoadStatistics
    /// Ended early by Ctrl-C: the figures cover the part of the window that ran.
    public let interrupted: Bool
    public let measuredSeconds: Double
    /// Signed-in connections at the end of the window, and the most seen at once.
    public let connectionsHeld: Int
    public let peakConnections: Int
    /// Games running at the end of the window.
    public let gamesRunning: Int
    public let serverBeforeRamp: ProcessSample?
    public let serverAtHoldStart: ProcessSample?
    public let serverAtHoldEnd: ProcessSample?
    public let selfAtHoldStart: ProcessSample?
    public let selfAtHoldEnd: ProcessSample?
    /// Watchers following a game at the end of the window.
    public var watchersWatching = 0

    public var latency: Percentiles { Percentiles(microseconds: statistics.inputLatencies) }

    /// `--reconnect`: the games taken back after their connections dropped; when they ran
    /// again, counted from the first drop (the node's death, in a failover), and the play each
    /// lost. Nil when none dropped.
    public var failover: (takenBack: Int, runningAgain: Percentiles, lost: Percentiles)? {
        let taken = statistics.wholeRun.takenBack
        guard let first = taken.map(\.droppedAt).min() else { return nil }
        let again = taken.map { UInt32(clamping: $0.resumedAt - first) }
        let lost = taken.map { UInt32(clamping: $0.lostMicroseconds) }
        return (taken.count, Percentiles(microseconds: again), Percentiles(microseconds: lost))
    }
    public var jitter: Percentiles { Percentiles(microseconds: statistics.stepJitters) }

    private func perSecond(_ count: Int) -> Double {
        measuredSeconds > 0 ? Double(count) / measuredSeconds : 0
    }

    public var stepFramesPerSecond: Double { perSecond(statistics.stepFrames) }
    public var bytesPerStepFrame: Double {
        statistics.stepFrames > 0 ? Double(statistics.stepFrameBytes) / Double(statistics.stepFrames) : 0
    }
    /// Payload bytes the server sent per running game per second (every message, not only steps).
    public var bytesPerGamePerSecond: Double {
        gamesRunning > 0 ? perSecond(statistics.bytesReceived) / Double(gamesRunning) : 0
    }
    /// The server's share of one core during the window (1.0 = a whole core).
    public var serverCoreShare: Double? {
        guard let start = serverAtHoldStart, let end = serverAtHoldEnd else { return nil }
        return end.coreShare(since: start)
    }
    /// The user-space and the kernel's parts of ``serverCoreShare``.
    public var serverUserCoreShare: Double? {
        guard let start = serverAtHoldStart, let end = serverAtHoldEnd else { return nil }
        return end.userCoreShare(since: start)
    }
    public var serverSystemCoreShare: Double? {
        guard let start = serverAtHoldStart, let end = serverAtHoldEnd else { return nil }
        return end.systemCoreShare(since: start)
    }
    /// ``serverCoreShare`` by thread name (the service thread, the storage threads, …).
    public var serverThreadCoreShares: [String: Double]? {
        guard let start = serverAtHoldStart, let end = serverAtHoldEnd else { return nil }
        return end.threadCoreShares(since: start)
    }
    public var serverResidentKiB: Int? { serverAtHoldEnd?.residentKiB }
    /// Server memory added by the connections (and games): resident at the window's end minus
    /// before the first connection.
    public var serverAddedKiB: Int? {
        guard let before = serverBeforeRamp, let end = serverAtHoldEnd else { return nil }
        return end.residentKiB - before.residentKiB
    }
    public var watcherLag: Percentiles { Percentiles(microseconds: statistics.watcherLags) }
    public var watcherJitter: Percentiles { Percentiles(microseconds: statistics.watcherJitters) }
    /// Every message that reached the watchers, per second (steps, moves, standings, …).
    public var watcherMessagesPerSecond: Double { perSecond(statistics.watcherMessages) }
    public var watcherStepFramesPerSecond: Double { perSecond(statistics.watcherStepFrames) }
    public var watcherBytesPerSecond: Double { perSecond(statistics.watcherBytes) }
    public var standingsPerSecond: Double { perSecond(statistics.standingsReceived) }
    /// Server memory added per connection, watchers included.
    public var serverAddedKiBPerConnection: Double? {
        guard let added = serverAddedKiB, options.connections + options.watchers > 0 else { return nil }
        return Double(added) / Double(options.connections + options.watchers)
    }
    private var isPlayTogether: Bool { options.mode == .race || options.watchers > 0 }

    public var clientCoreShare: Double? {
        guard let start = selfAtHoldStart, let end = selfAtHoldEnd else { return nil }
        return end.coreShare(since: start)
    }

    public var text: String {
        let l = latency, j = jitter
        var lines = [
            "load test: \(options.connections) connections, \(options.idle ? "idle (signed in, no games)" : "playing \(options.level)") against \(options.host):\(options.port)\(interrupted ? " (interrupted)" : "")",
            "  window            \(format(measuredSeconds)) s",
            "  connections held  \(connectionsHeld) (peak \(peakConnections))",
            "  games running     \(gamesRunning); started \(statistics.gamesStarted), ended \(statistics.gamesEnded), crashes \(statistics.crashes)",
            "  step frames       \(format(stepFramesPerSecond))/s, \(format(bytesPerStepFrame)) bytes each; \(format(bytesPerGamePerSecond)) bytes per game per second",
            "  input → result    p50 \(format(l.p50)) ms, p95 \(format(l.p95)) ms, p99 \(format(l.p99)) ms, max \(format(l.max)) ms (\(l.count) moves)",
            "  step jitter       p50 \(format(j.p50)) ms, p99 \(format(j.p99)) ms, max \(format(j.max)) ms (\(j.count) steps)",
            "  errors            \(statistics.errorCount)\(describe(statistics.serverErrors))",
            "  disconnects       \(statistics.disconnectCount)\(describe(Dictionary(uniqueKeysWithValues: statistics.disconnects.map { ("close \($0.key)", $0.value) })))",
            "  connect failures  \(statistics.connectFailures)",
        ]
        if options.followGameURL { lines.append("  moved straight    \(statistics.wholeRun.movedStraight) (to the game URL their welcome named)") }
        if options.reconnect, let failover {
            lines.append("  taken back        \(failover.takenBack) of \(statistics.wholeRun.droppedWhilePlaying) games whose connection dropped; "
                + "running again \(format(failover.runningAgain.p50)) ms (half), \(format(failover.runningAgain.p99)) ms (99 %), "
                + "\(format(failover.runningAgain.max)) ms (all) after the first drop; play lost p50 \(format(failover.lost.p50)) ms, "
                + "p99 \(format(failover.lost.p99)) ms, max \(format(failover.lost.max)) ms")
        }
        if let share = serverCoreShare, let rss = serverResidentKiB {
            var split = ""
            if let user = serverUserCoreShare, let system = serverSystemCoreShare {
                split = " (user \(format(user * 100)), system \(format(system * 100)))"
            }
            lines.append("  server            \(format(share * 100)) % of a core\(split), \(rss) KiB resident (\(serverAddedKiB.map { "+\($0)" } ?? "?") KiB since before the ramp)")
        }
        if let shares = serverThreadCoreShares, !shares.isEmpty {
            let busiest = shares.sorted { $0.value > $1.value }.prefix(4)
            lines.append("  server threads    " + busiest.map { "\($0.key) \(format($0.value * 100)) %" }.joined(separator: ", "))
        }
        if let share = clientCoreShare {
            lines.append("  load generator    \(format(share * 100)) % of a core")
        }
        if isPlayTogether { lines.append(contentsOf: playTogetherLines) }
        return lines.joined(separator: "\n")
    }

    /// One line of JSON with every figure, keys sorted.
    public var json: String {
        let l = latency, j = jitter
        var object: [String: Any] = [
            "connections": options.connections, "level": options.level, "idle": options.idle,
            "interrupted": interrupted, "measuredSeconds": measuredSeconds,
            "connectionsHeld": connectionsHeld, "peakConnections": peakConnections, "gamesRunning": gamesRunning,
            "gamesStarted": statistics.gamesStarted, "gamesEnded": statistics.gamesEnded, "crashes": statistics.crashes,
            "stepFrames": statistics.stepFrames, "stepFramesPerSecond": stepFramesPerSecond, "bytesPerStepFrame": bytesPerStepFrame,
            "bytesPerGamePerSecond": bytesPerGamePerSecond, "movesSent": statistics.movesSent,
            "latencyMs": ["p50": l.p50, "p95": l.p95, "p99": l.p99, "max": l.max, "count": l.count],
            "jitterMs": ["p50": j.p50, "p95": j.p95, "p99": j.p99, "max": j.max, "count": j.count],
            "errors": statistics.errorCount, "disconnects": statistics.disconnectCount,
            "connectFailures": statistics.connectFailures,
        ]
        if options.followGameURL { object["movedStraight"] = statistics.wholeRun.movedStraight }
        if options.reconnect, let failover {
            object["failover"] = [
                "droppedWhilePlaying": statistics.wholeRun.droppedWhilePlaying, "takenBack": failover.takenBack,
                "gamesSaved": statistics.wholeRun.gamesSaved,
                "runningAgainMs": ["p50": failover.runningAgain.p50, "p99": failover.runningAgain.p99, "max": failover.runningAgain.max],
                "lostMs": ["p50": failover.lost.p50, "p99": failover.lost.p99, "max": failover.lost.max],
            ] as [String: Any]
        }
        if let steps = options.steps { object["steps"] = steps }
        if let share = serverCoreShare { object["serverCoreShare"] = share }
        if let share = serverUserCoreShare { object["serverUserCoreShare"] = share }
        if let share = serverSystemCoreShare { object["serverSystemCoreShare"] = share }
        if let shares = serverThreadCoreShares { object["serverThreadCoreShares"] = shares }
        if let rss = serverResidentKiB { object["serverResidentKiB"] = rss }
        if let added = serverAddedKiB { object["serverAddedKiB"] = added }
        if let rss = serverBeforeRamp?.residentKiB { object["serverBaselineKiB"] = rss }
        if let share = clientCoreShare { object["clientCoreShare"] = share }
        if isPlayTogether { object.merge(playTogetherJSON) { _, new in new } }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Race and watch tests only (a solo test's report stays as it was).
    private var playTogetherLines: [String] {
        let run = statistics.wholeRun, lag = watcherLag, wj = watcherJitter
        var lines: [String] = []
        if options.mode == .race {
            lines.append("  rooms             \(options.rooms) of \(options.roomSeats) seats; \(run.roomsOpened) opened, races started \(run.racesStarted), ended \(run.racesEnded) (in the window \(statistics.racesStarted), \(statistics.racesEnded))")
            lines.append("  standings         \(format(standingsPerSecond))/s to racers, \(statistics.standingsReceived > 0 ? format(Double(statistics.standingsBytes) / Double(statistics.standingsReceived)) : "0") bytes each")
        }
        if options.watchers > 0 {
            lines.append("  watchers          \(watchersWatching) of \(options.watchers) watching; \(run.watchesStarted) watches started, \(statistics.watchesEnded) ended in the window")
            lines.append("  to watchers       \(format(watcherMessagesPerSecond)) messages/s (\(format(watcherStepFramesPerSecond)) steps/s, \(statistics.watcherStandings) standings), \(format(watcherBytesPerSecond)) bytes/s")
            lines.append("  watcher lag       p50 \(format(lag.p50)) ms, p99 \(format(lag.p99)) ms, max \(format(lag.max)) ms behind its player (\(lag.count) steps, \(statistics.watcherFramesFirst) first)")
            lines.append("  watcher jitter    p50 \(format(wj.p50)) ms, p99 \(format(wj.p99)) ms, max \(format(wj.max)) ms (\(wj.count) steps)")
        }
        if !run.serverErrors.isEmpty {
            lines.append("  errors, whole run \(run.serverErrors.values.reduce(0, +))\(describe(run.serverErrors))")
        }
        if let perConnection = serverAddedKiBPerConnection {
            lines.append("  server memory     \(format(perConnection)) KiB per connection (players and watchers)")
        }
        return lines
    }

    private var playTogetherJSON: [String: Any] {
        let run = statistics.wholeRun, lag = watcherLag, wj = watcherJitter
        var object: [String: Any] = [
            "mode": options.mode.rawValue, "watchers": options.watchers,
            "errorsWholeRun": run.serverErrors.values.reduce(0, +), "errorCodesWholeRun": run.serverErrors,
        ]
        if options.mode == .race {
            object["roomSeats"] = options.roomSeats
            object["rooms"] = options.rooms
            object["race"] = [
                "roomsOpened": run.roomsOpened, "racesStarted": run.racesStarted, "racesEnded": run.racesEnded,
                "racesStartedInWindow": statistics.racesStarted, "racesEndedInWindow": statistics.racesEnded,
                "standingsPerSecond": standingsPerSecond, "standingsBytes": statistics.standingsBytes,
                "roomsLeft": statistics.roomsLeft,
            ] as [String: Any]
        }
        if options.watchers > 0 {
            object["watch"] = [
                "watching": watchersWatching, "watchesStarted": run.watchesStarted,
                "watchesEndedInWindow": statistics.watchesEnded,
                "messagesPerSecond": watcherMessagesPerSecond, "stepFramesPerSecond": watcherStepFramesPerSecond,
                "bytesPerSecond": watcherBytesPerSecond, "standings": statistics.watcherStandings,
                "lagMs": ["p50": lag.p50, "p95": lag.p95, "p99": lag.p99, "max": lag.max, "count": lag.count],
                "framesFirst": statistics.watcherFramesFirst,
                "jitterMs": ["p50": wj.p50, "p95": wj.p95, "p99": wj.p99, "max": wj.max, "count": wj.count],
            ] as [String: Any]
        }
        if let perConnection = serverAddedKiBPerConnection { object["serverAddedKiBPerConnection"] = perConnection }
        return object
    }

    private func format(_ value: Double) -> String {
        String(format: value >= 100 ? "%.0f" : "%.2f", value)
    }

    private func describe(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "" : " (" + counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
}
