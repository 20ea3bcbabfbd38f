import Foundation
import Synchronization

/// The server's counters, gauges and histograms, rendered for GET /metrics in the Prometheus
/// text format (version 0.0.4). Both sides of the server register theirs here: the HTTP API
/// (requests, latency, database queue) and the WebSocket side (games running, steps, ...).
///
/// Threading: any thread may register, update or render. Each metric guards its own values
/// with a mutex; updates are a dictionary write, cheap enough for the service thread.
/// Register a metric once, at startup, and keep the returned object: registering a name twice
/// returns the first one (it must be of the same kind).
public final class Metrics: Sendable {
    private let families = Mutex<[String: any MetricFamily]>([:])
    private let order = Mutex<[String]>([])
    private let collectors = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    /// Runs `collect` at the start of every `render`, on the rendering thread: for figures
    /// counted elsewhere and handed to their metrics in batches (`WebSocketMetrics`), so that a
    /// scrape sees everything counted before it.
    public func beforeRender(_ collect: @escaping @Sendable () -> Void) {
        collectors.withLock { $0.append(collect) }
    }

    /// A value that only goes up (requests served, games started). `labelNames` fixes the
    /// labels each series has, e.g. `["route", "status"]`.
    public func counter(_ name: String, help: String, labelNames: [String] = []) -> Counter {
        register(name) { Counter(name: name, help: help, labelNames: labelNames) }
    }

    /// A value that goes up and down (connections open, games running).
    public func gauge(_ name: String, help: String, labelNames: [String] = []) -> Gauge {
        register(name) { Gauge(name: name, help: help, labelNames: labelNames) }
    }

    /// A gauge read when /metrics is scraped, from something that already keeps the number
    /// (a queue's depth, a table's size). `read` runs on the scraping thread: it must be
    /// thread-safe and quick.
    public func gauge(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        _ = register(name) { ComputedGauge(name: name, help: help, read: read) }
    }

    /// A counter read when /metrics is scraped, from something that already counts (the
    /// cluster bus's reconnects). `read` must be thread-safe, quick, and never go down.
    public func counter(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        _ = register(name) { ComputedGauge(name: name, help: help, type: "counter", read: read) }
    }

    /// Observations counted into cumulative buckets (request latency in seconds).
    public func histogram(_ name: String, help: String, labelNames: [String] = [],
                          buckets: [Double] = Histogram.latencyBuckets) -> Histogram {
        register(name) { Histogram(name: name, help: help, labelNames: labelNames, buckets: buckets) }
    }

    /// Every metric in the order registered, as Prometheus text.
    public func render() -> String {
        for collect in collectors.withLock({ $0 }) { collect() }
        let names = order.withLock { $0 }
        let all = families.withLock { $0 }
        var text = ""
        for name in names {
            guard let family = all[name] else { continue }
            text += "# HELP \(name) \(Self.escapeHelp(family.help))\n# TYPE \(name) \(family.type)\n"
            for line in family.samples() { text += line + "\n" }
        }
        return text
    }

    /// The sum of every series of a counter or gauge as a scrape would see it (the collectors
    /// run first), keyed by name; a name not registered, or a histogram, is left out. For the
    /// console's overview. Call it where /metrics is rendered: the game's service thread, which
    /// the collectors of batched counts need.
    public func totals(_ names: [String]) -> [String: Double] {
        for collect in collectors.withLock({ $0 }) { collect() }
        let all = families.withLock { $0 }
        var totals: [String: Double] = [:]
        for name in names {
            switch all[name] {
            case let counter as Counter: totals[name] = counter.total
            case let gauge as Gauge: totals[name] = gauge.total
            case let computed as ComputedGauge: totals[name] = computed.read()
            default: continue
            }
        }
        return totals
    }

    private func register<M: MetricFamily>(_ name: String, make: () -> M) -> M {
        precondition(Self.isValidName(name), "not a Prometheus metric name: \(name)")
        return families.withLock { families in
            if let existing = families[name] {
                guard let same = existing as? M else {
                    preconditionFailure("metric \(name) is already registered as a \(existing.type)")
                }
                return same
            }
            let made = make()
            families[name] = made
            order.withLock { $0.append(name) }
            return made
        }
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`, as Prometheus requires.
    static func isValidName(_ name: String) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
        }
        let bytes = Array(name.utf8)
        guard let first = bytes.first, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func escapeLabelValue(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// `{a="1",b="2"}`, or nothing without labels.
    static func labelText(_ names: [String], _ values: [String], extra: (String, String)? = nil) -> String {
        var pairs = zip(names, values).map { "\($0)=\"\(escapeLabelValue($1))\"" }
        if let (name, value) = extra { pairs.append("\(name)=\"\(escapeLabelValue(value))\"") }
        return pairs.isEmpty ? "" : "{" + pairs.joined(separator: ",") + "}"
    }

    /// Prometheus writes numbers as Go does: integers without a fraction, +Inf, NaN.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

/// What `Metrics` keeps of each metric.
protocol MetricFamily: Sendable {
    var help: String { get }
    /// `counter`, `gauge` or `histogram`.
    var type: String { get }
    /// The sample lines, without the trailing newline.
    func samples() -> [String]
}

/// A counter; one series per combination of label values.
public final class Counter: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    var type: String { "counter" }
    private let values = Mutex<[[String]: Double]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// Adds `amount` (0 or more) to the series with these label values, in `labelNames` order.
    public func increment(by amount: Double = 1, _ labels: String...) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        precondition(amount >= 0, "a counter only goes up")
        values.withLock { $0[labels, default: 0] += amount }
    }

    /// Every series together.
    var total: Double { values.withLock { $0.values.reduce(0, +) } }

    /// The value of one series (0 when never incremented).
    public func value(_ labels: String...) -> Double {
        values.withLock { $0[labels] ?? 0 }
    }

    func samples() -> [String] {
        let snapshot = values.withLock { $0 }
        if snapshot.isEmpty && labelNames.isEmpty { return ["\(name) 0"] }
        return snapshot.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { labels, value in
            "\(name)\(Metrics.labelText(labelNames, labels)) \(Metrics.number(value))"
        }
    }
}

/// A gauge set or moved by the code that knows the value.
public final class Gauge: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    var type: String { "gauge" }
    private let values = Mutex<[[String]: Double]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    public func set(_ value: Double, _ labels: String...) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        values.withLock { $0[labels] = value }
    }

    public func add(_ amount: Double, _ labels: String...) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        values.withLock { $0[labels, default: 0] += amount }
    }

    public func value(_ labels: String...) -> Double {
        values.withLock { $0[labels] ?? 0 }
    }

    /// Every series together.
    var total: Double { values.withLock { $0.values.reduce(0, +) } }

    func samples() -> [String] {
        let snapshot = values.withLock { $0 }
        if snapshot.isEmpty && labelNames.isEmpty { return ["\(name) 0"] }
        return snapshot.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { labels, value in
            "\(name)\(Metrics.labelText(labelNames, labels)) \(Metrics.number(value))"
        }
    }
}

/// A gauge (or a counter kept elsewhere) whose value is read at scrape time.
final class ComputedGauge: MetricFamily {
    let name: String
    let help: String
    let read: @Sendable () -> Double
    let type: String

    init(name: String, help: String, type: String = "gauge", read: @escaping @Sendable () -> Double) {
        self.name = name
        self.help = help
        self.type = type
        self.read = read
    }

    func samples() -> [String] {
        ["\(name) \(Metrics.number(read()))"]
    }
}

/// A histogram: per series, how many observations fell at or below each bucket's bound, their
/// sum and their count.
public final class Histogram: MetricFamily {
    /// Seconds, from 1 ms to 10 s: where an API request's latency lands.
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    let name: String
    let help: String
    let labelNames: [String]
    let buckets: [Double]
    var type: String { "histogram" }
    private let series = Mutex<[[String]: Series]>([:])

    struct Series {
        /// Per bucket, observations at or below its bound (not yet cumulative).
        var counts: [UInt64]
        var sum = 0.0
        var count: UInt64 = 0
    }

    init(name: String, help: String, labelNames: [String], buckets: [Double]) {
        precondition(!buckets.isEmpty && zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 },
                     "histogram buckets must be increasing")
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.buckets = buckets
    }

    public func observe(_ value: Double, _ labels: String...) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        let index = buckets.firstIndex { value <= $0 }
        series.withLock { all in
            var entry = all[labels] ?? Series(counts: Array(repeating: 0, count: buckets.count))
            if let index { entry.counts[index] += 1 }
            entry.sum += value
            entry.count += 1
            all[labels] = entry
        }
    }

    /// Adds observations counted elsewhere: `counts` per bucket (not cumulative; values above
    /// the last bound only in `count`), their `sum` and `count`. For hot paths that count on
    /// their own thread and merge in batches, so not every observation takes the lock.
    public func merge(counts: [UInt64], sum: Double, count: UInt64, _ labels: String...) {
        precondition(labels.count == labelNames.count, "\(name) takes labels \(labelNames)")
        precondition(counts.count == buckets.count, "\(name) has \(buckets.count) buckets")
        series.withLock { all in
            var entry = all[labels] ?? Series(counts: Array(repeating: 0, count: buckets.count))
            for index in counts.indices { entry.counts[index] += counts[index] }
            entry.sum += sum
            entry.count += count
            all[labels] = entry
        }
    }

    /// Observations of one series so far.
    public func count(_ labels: String...) -> UInt64 {
        series.withLock { $0[labels]?.count ?? 0 }
    }

    func samples() -> [String] {
        var snapshot = series.withLock { $0 }
        if snapshot.isEmpty && labelNames.isEmpty {
            snapshot[[]] = Series(counts: Array(repeating: 0, count: buckets.count))
        }
        var lines: [String] = []
        for (labels, entry) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            var cumulative: UInt64 = 0
            for (bound, count) in zip(buckets, entry.counts) {
                cumulative += count
                lines.append("\(name)_bucket\(Metrics.labelText(labelNames, labels, extra: ("le", Metrics.number(bound)))) \(cumulative)")
            }
            lines.append("\(name)_bucket\(Metrics.labelText(labelNames, labels, extra: ("le", "+Inf"))) \(entry.count)")
            lines.append("\(name)_sum\(Metrics.labelText(labelNames, labels)) \(Metrics.number(entry.sum))")
            lines.append("\(name)_count\(Metrics.labelText(labelNames, labels)) \(entry.count)")
        }
        return lines
    }
}
