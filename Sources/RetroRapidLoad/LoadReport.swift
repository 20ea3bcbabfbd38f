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

    public var latency: Percentiles { Percentiles(microseconds: statistics.inputLatencies) }
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
    public var serverResidentKiB: Int? { serverAtHoldEnd?.residentKiB }
    /// Server memory added by the connections (and games): resident at the window's end minus
    /// before the first connection.
    public var serverAddedKiB: Int? {
        guard let before = serverBeforeRamp, let end = serverAtHoldEnd else { return nil }
        return end.residentKiB - before.residentKiB
    }
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
        if let share = serverCoreShare, let rss = serverResidentKiB {
            lines.append("  server            \(format(share * 100)) % of a core, \(rss) KiB resident (\(serverAddedKiB.map { "+\($0)" } ?? "?") KiB since before the ramp)")
        }
        if let share = clientCoreShare {
            lines.append("  load generator    \(format(share * 100)) % of a core")
        }
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
        if let steps = options.steps { object["steps"] = steps }
        if let share = serverCoreShare { object["serverCoreShare"] = share }
        if let rss = serverResidentKiB { object["serverResidentKiB"] = rss }
        if let added = serverAddedKiB { object["serverAddedKiB"] = added }
        if let rss = serverBeforeRamp?.residentKiB { object["serverBaselineKiB"] = rss }
        if let share = clientCoreShare { object["clientCoreShare"] = share }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private func format(_ value: Double) -> String {
        String(format: value >= 100 ? "%.0f" : "%.2f", value)
    }

    private func describe(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "" : " (" + counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }
}
