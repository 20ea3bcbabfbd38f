#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// CPU time and resident memory of a process, read from Linux's /proc: how the load generator
/// measures the server it drives (given its pid) and itself.
public struct ProcessSample: Sendable, Equatable {
    /// User plus system CPU time, seconds.
    public let cpuSeconds: Double
    /// Resident set size, KiB (VmRSS).
    public let residentKiB: Int
    /// Monotonic time the sample was taken, microseconds.
    public let takenAt: Int64

    /// Share of one core used between `earlier` and this sample (1.0 is a whole core).
    public func coreShare(since earlier: ProcessSample) -> Double {
        let wall = Double(takenAt - earlier.takenAt) / 1_000_000
        return wall > 0 ? (cpuSeconds - earlier.cpuSeconds) / wall : 0
    }
}

public enum ProcessSampler {
    /// Samples process `pid`; nil when it does not exist (or /proc is not Linux's).
    public static func sample(pid: Int32, at now: Int64) -> ProcessSample? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Counting from the state field (field 3 of proc(5)): utime is field 14, stime 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        return ProcessSample(cpuSeconds: (user + system) / ticks, residentKiB: rss, takenAt: now)
    }
}
