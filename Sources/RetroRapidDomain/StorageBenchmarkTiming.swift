import Foundation

/// The clock and the latency words of `bench-storage`'s report, the same on every backend.
public enum StorageBenchmarkTiming {
    /// Nanoseconds on a monotonic clock.
    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    public static func seconds(since start: UInt64) -> Double { Double(now() - start) / 1e9 }

    /// `n=… median_ms=… p99_ms=… max_ms=…` of `nanoseconds`.
    public static func latency(_ nanoseconds: [UInt64]) -> String {
        guard let last = nanoseconds.max() else { return "queries=0" }
        let sorted = nanoseconds.sorted()
        func ms(_ value: UInt64) -> String { String(format: "%.3f", Double(value) / 1e6) }
        let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        return "n=\(sorted.count) median_ms=\(ms(sorted[sorted.count / 2])) p99_ms=\(ms(p99)) max_ms=\(ms(last))"
    }
}
