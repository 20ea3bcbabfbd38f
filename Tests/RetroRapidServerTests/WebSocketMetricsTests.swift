import Foundation
import Synchronization
import Testing
@testable import RetroRapidServer

/// The game side's counts reach the registry on a cadence, and every scrape sees all of them.
@Suite("WebSocket metrics")
struct WebSocketMetricsTests {
    final class FakeClock: Sendable {
        let now = Atomic<Int64>(1_000_000)
        func advance(_ microseconds: Int64) { now.add(microseconds, ordering: .relaxed) }
    }

    @Test func countsAreHandedOverOnACadenceAndAtEveryScrape() throws {
        let registry = Metrics()
        let clock = FakeClock()
        let metrics = WebSocketMetrics(registry, clock: { clock.now.load(ordering: .relaxed) })
        // The registry's own objects, read without rendering (which would hand over).
        let steps = registry.counter("retrorapid_game_steps_total", help: "")
        let sent = registry.counter("retrorapid_websocket_messages_sent_total", help: "")
        let lateness = registry.histogram("retrorapid_game_step_lateness_seconds", help: "")

        metrics.stepTaken(lateMicroseconds: 700)
        metrics.sent += 1
        metrics.flush()  // the first: at once
        #expect(steps.value() == 1 && sent.value() == 1 && lateness.count() == 1)

        clock.advance(50_000)
        metrics.stepTaken(lateMicroseconds: 30_000)
        metrics.sent += 2
        metrics.receivedCount += 1
        metrics.flush()  // 50 ms later: they wait
        #expect(steps.value() == 1 && sent.value() == 1)

        // A scrape on the counting thread takes everything counted before it.
        let scraped = try PrometheusText(registry.render())
        #expect(scraped.value("retrorapid_game_steps_total") == 2)
        #expect(scraped.value("retrorapid_websocket_messages_sent_total") == 3)
        #expect(scraped.value("retrorapid_websocket_messages_received_total") == 1)
        #expect(scraped.value("retrorapid_game_step_lateness_seconds_count") == 2)
        #expect(scraped.value("retrorapid_game_step_lateness_seconds_bucket", ["le": "0.001"]) == 1)
        #expect(scraped.value("retrorapid_game_step_lateness_seconds_bucket", ["le": "0.05"]) == 2)
        #expect(abs((scraped.value("retrorapid_game_step_lateness_seconds_sum") ?? 0) - 0.0307) < 1e-9)

        // Nothing is counted twice, and 100 ms after the last hand-over the next flush goes.
        metrics.sent += 1
        metrics.flush()
        #expect(sent.value() == 3)
        clock.advance(50_000)
        metrics.flush()
        #expect(sent.value() == 4 && steps.value() == 2)
    }

    /// A render on another thread never touches the service thread's plain counts (it sees them
    /// as of the last hand-over); only the counting thread's own scrape hands them over.
    @Test func aRenderOnAnotherThreadLeavesTheCountsAlone() throws {
        let registry = Metrics()
        let clock = FakeClock()
        let metrics = WebSocketMetrics(registry, clock: { clock.now.load(ordering: .relaxed) })
        let sent = registry.counter("retrorapid_websocket_messages_sent_total", help: "")
        metrics.sent += 1
        metrics.flush()
        metrics.sent += 1
        metrics.flush()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = registry.render()
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(sent.value() == 1)
        #expect(try PrometheusText(registry.render()).value("retrorapid_websocket_messages_sent_total") == 2)
    }
}
