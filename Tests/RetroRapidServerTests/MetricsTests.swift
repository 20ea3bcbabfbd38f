import Foundation
import Testing
@testable import RetroRapidServer

/// A reader of the Prometheus text format (0.0.4) strict enough to catch what a scraper would
/// refuse: samples of undeclared metrics, malformed lines, labels, numbers.
struct PrometheusText {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var types: [String: String] = [:]
    var samples: [Sample] = []

    init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw TestHTTPError("the exposition must end with a newline") }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                    throw TestHTTPError("bad TYPE line: \(line)")
                }
                guard types[String(parts[2])] == nil else { throw TestHTTPError("TYPE given twice: \(line)") }
                types[String(parts[2])] = String(parts[3])
            } else if line.hasPrefix("#") {
                continue
            } else {
                samples.append(try Self.sample(String(line)))
            }
        }
        for sample in samples {
            let family = ["_bucket", "_sum", "_count"].reduce(sample.name) { name, suffix in
                types[name] == nil && name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : name
            }
            guard types[family] != nil else { throw TestHTTPError("sample of an undeclared metric: \(sample.name)") }
        }
    }

    static func sample(_ line: String) throws -> Sample {
        var rest = Substring(line)
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }
        guard let first = name.first, !first.isNumber else { throw TestHTTPError("bad metric name: \(line)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let key = rest.prefix { $0 != "=" }
                rest = rest.dropFirst(key.count)
                guard rest.hasPrefix("=\"") else { throw TestHTTPError("bad label in: \(line)") }
                rest = rest.dropFirst(2)
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\", let escaped = rest.first {
                        rest = rest.dropFirst()
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { throw TestHTTPError("unterminated label value in: \(line)") }
                rest = rest.dropFirst()
                labels[String(key)] = value
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw TestHTTPError("no value in: \(line)") }
        let text = rest.dropFirst()
        let value: Double
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let number = Double(text) else { throw TestHTTPError("bad value in: \(line)") }
            value = number
        }
        return Sample(name: String(name), labels: labels, value: value)
    }

    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }
}

@Suite("Metrics")
struct MetricsTests {
    @Test func metricsParseAsPrometheusTextAndCountRequests() throws {
        let server = try RunningGameServer()
        _ = try server.createPlayer()
        _ = try server.createPlayer()
        _ = try server.request("GET", "/api/v1/me")
        _ = try server.request("GET", "/api/v1/nothing-here")

        let response = try server.request("GET", "/metrics")
        #expect(response.status == 200)
        #expect(response[header: "content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let metrics = try PrometheusText(response.text)

        let requests = "retrorapid_http_requests_total"
        #expect(metrics.types[requests] == "counter")
        #expect(metrics.value(requests, ["route": "/api/v1/players", "method": "POST", "status": "201"]) == 2)
        #expect(metrics.value(requests, ["route": "/api/v1/me", "method": "GET", "status": "401"]) == 1)
        #expect(metrics.value(requests, ["route": "unmatched", "method": "GET", "status": "404"]) == 1)

        let latency = "retrorapid_http_request_duration_seconds"
        #expect(metrics.types[latency] == "histogram")
        let buckets = metrics.samples.filter { $0.name == latency + "_bucket" && $0.labels["route"] == "/api/v1/players" }
        #expect(buckets.count == Histogram.latencyBuckets.count + 1)
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value })
        #expect(buckets.last?.labels["le"] == "+Inf")
        #expect(buckets.last?.value == 2)
        #expect(metrics.value(latency + "_count", ["route": "/api/v1/players"]) == 2)

        #expect(metrics.types["retrorapid_connections_open"] == "gauge")
        #expect((metrics.value("retrorapid_connections_open") ?? 0) >= 1)  // this scrape's own
        #expect(metrics.value("retrorapid_database_queue_depth") == 0)
        #expect(metrics.value("retrorapid_games_running") == 0)
        #expect(metrics.types["retrorapid_game_steps_total"] == "counter")
        #expect(metrics.types["retrorapid_game_step_lateness_seconds"] == "histogram")
        #expect(metrics.value("retrorapid_game_step_lateness_seconds_count") == 0)

        // The scrape itself is counted by the next one.
        let again = try PrometheusText(try server.request("GET", "/metrics").text)
        #expect(again.value(requests, ["route": "/metrics", "method": "GET", "status": "200"]) == 1)
    }

    @Test func connectionsAreCountedUntilTheyClose() throws {
        let server = try RunningGameServer()
        let baseline = server.server.http.openConnectionCount
        let idle = try TestHTTPConnection(port: server.port)
        _ = try idle.request("GET", "/")  // a file: the connection stays open
        #expect(server.server.http.openConnectionCount == baseline + 1)
        _ = idle
        let closed = try TestHTTPConnection(port: server.port)
        _ = try closed.request("GET", "/healthz")  // a route: the server closes it
        #expect(closed.isClosedByPeer())
        // The server frees the connection just after closing it: allow it a moment.
        let deadline = ContinuousClock.now + .seconds(2)
        while server.server.http.openConnectionCount != baseline + 1 && ContinuousClock.now < deadline {
            usleep(5_000)
        }
        #expect(server.server.http.openConnectionCount == baseline + 1)
    }

    @Test func labelValuesAndHelpAreEscaped() throws {
        let metrics = Metrics()
        let counter = metrics.counter("test_total", help: "Lines\nand \\ slashes.", labelNames: ["path"])
        counter.increment("/a\"b\\c\nd")
        let parsed = try PrometheusText(metrics.render())
        #expect(parsed.value("test_total", ["path": "/a\"b\\c\nd"]) == 1)
        #expect(metrics.render().contains(#"# HELP test_total Lines\nand \\ slashes."#))
    }

    @Test func registeringANameAgainReturnsTheSameMetric() {
        let metrics = Metrics()
        let first = metrics.gauge("games_running", help: "Games.")
        let second = metrics.gauge("games_running", help: "Games.")
        first.set(3)
        #expect(second.value() == 3)
        #expect(metrics.render() == "# HELP games_running Games.\n# TYPE games_running gauge\ngames_running 3\n")
    }

    /// A hot path counts into a `LocalHistogram` and merges it in batches: the result must be
    /// what observing each value would have given.
    @Test func mergedBatchesCountAsSingleObservationsWould() throws {
        let metrics = Metrics()
        let merged = metrics.histogram("merged_seconds", help: "Merged.", buckets: [0.001, 0.01])
        let observed = metrics.histogram("observed_seconds", help: "Observed.", buckets: [0.001, 0.01])
        var local = LocalHistogram(bounds: [1_000, 10_000])
        for batch: [Int64] in [[0, 1_000, 1_001], [50_000], [9_999, 10_000, 250]] {
            for microseconds in batch {
                local.record(microseconds)
                observed.observe(Double(microseconds) / 1_000_000)
            }
            merged.merge(counts: local.counts, sum: Double(local.sum) / 1_000_000, count: local.count)
            local.reset()
        }
        #expect(local.count == 0 && local.sum == 0 && local.counts == [0, 0])
        let parsed = try PrometheusText(metrics.render())
        for suffix in ["_count", "_sum"] {
            let a = try #require(parsed.value("merged_seconds" + suffix))
            let b = try #require(parsed.value("observed_seconds" + suffix))
            #expect(abs(a - b) < 1e-9, "\(suffix)")
        }
        for bound in ["0.001", "0.01", "+Inf"] {
            #expect(parsed.value("merged_seconds_bucket", ["le": bound]) == parsed.value("observed_seconds_bucket", ["le": bound]))
        }
        #expect(parsed.value("merged_seconds_bucket", ["le": "0.001"]) == 3)  // 0, 250, 1000
        #expect(parsed.value("merged_seconds_bucket", ["le": "0.01"]) == 6)
        #expect(parsed.value("merged_seconds_count") == 7)
    }

    @Test func histogramBucketsAreCumulative() throws {
        let metrics = Metrics()
        let histogram = metrics.histogram("latency_seconds", help: "Latency.", buckets: [0.1, 1])
        for value in [0.05, 0.5, 0.5, 5] { histogram.observe(value) }
        let parsed = try PrometheusText(metrics.render())
        #expect(parsed.value("latency_seconds_bucket", ["le": "0.1"]) == 1)
        #expect(parsed.value("latency_seconds_bucket", ["le": "1"]) == 3)
        #expect(parsed.value("latency_seconds_bucket", ["le": "+Inf"]) == 4)
        #expect(parsed.value("latency_seconds_count") == 4)
        #expect(abs((parsed.value("latency_seconds_sum") ?? 0) - 6.05) < 1e-9)
    }
}
