#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// CPU time and resident memory of a process, read from Linux's /proc: how the load generator
/// measures the server it drives (given its pid) and itself.
public struct ProcessSample: Sendable, Equatable {
    /// User plus system CPU time, seconds.
    public var cpuSeconds: Double { userSeconds + systemSeconds }
    /// CPU time in user space (our code, the libraries) and in the kernel on the process's
    /// behalf (its system calls), seconds: a server and a C broadcaster that make the same
    /// system calls differ in the first.
    public let userSeconds: Double
    public let systemSeconds: Double
    /// CPU time by thread name (`/proc/PID/task/*/comm`; threads of one name added up), seconds:
    /// how the server's service thread and its storage threads share it. Read from each thread's
    /// `schedstat` (nanoseconds on a CPU) where the kernel has it, because `stat`'s clock ticks
    /// (10 ms) round a few seconds of a lightly loaded thread down to nothing; else from `stat`.
    public var threadSeconds: [String: Double] = [:]
    /// Resident set size, KiB (VmRSS).
    public let residentKiB: Int
    /// Monotonic time the sample was taken, microseconds.
    public let takenAt: Int64

    /// Share of one core used between `earlier` and this sample (1.0 is a whole core).
    public func coreShare(since earlier: ProcessSample) -> Double {
        share(cpuSeconds - earlier.cpuSeconds, since: earlier)
    }

    /// The user-space part of ``coreShare(since:)``.
    public func userCoreShare(since earlier: ProcessSample) -> Double {
        share(userSeconds - earlier.userSeconds, since: earlier)
    }

    /// The kernel's part of ``coreShare(since:)``.
    public func systemCoreShare(since earlier: ProcessSample) -> Double {
        share(systemSeconds - earlier.systemSeconds, since: earlier)
    }

    /// ``coreShare(since:)`` by thread name, for the names in both samples.
    public func threadCoreShares(since earlier: ProcessSample) -> [String: Double] {
        var shares: [String: Double] = [:]
        for (name, seconds) in threadSeconds {
            guard let before = earlier.threadSeconds[name] else { continue }
            shares[name] = share(seconds - before, since: earlier)
        }
        return shares
    }

    private func share(_ seconds: Double, since earlier: ProcessSample) -> Double {
        let wall = Double(takenAt - earlier.takenAt) / 1_000_000
        return wall > 0 ? seconds / wall : 0
    }
}

public enum ProcessSampler {
    /// Samples process `pid`; nil when it does not exist (or /proc is not Linux's).
    public static func sample(pid: Int32, at now: Int64) -> ProcessSample? {
        guard let (user, system) = cpuSeconds(statFile: "/proc/\(pid)/stat"),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        var sample = ProcessSample(userSeconds: user, systemSeconds: system, residentKiB: rss, takenAt: now)
        let tasks = "/proc/\(pid)/task"
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            // A thread that ended between the listing and the read is left out.
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                  let seconds = runSeconds(schedstatFile: "\(tasks)/\(task)/schedstat")
                      ?? cpuSeconds(statFile: "\(tasks)/\(task)/stat").map({ $0.user + $0.system })
            else { continue }
            let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
            sample.threadSeconds[name, default: 0] += seconds
        }
        return sample
    }

    /// Seconds on a CPU from a `schedstat` file of proc(5): its first field, in nanoseconds.
    private static func runSeconds(schedstatFile: String) -> Double? {
        guard let schedstat = try? String(contentsOfFile: schedstatFile, encoding: .utf8),
              let first = schedstat.split(separator: " ").first,
              let nanoseconds = UInt64(first) else { return nil }
        return Double(nanoseconds) / 1_000_000_000
    }

    /// User and system CPU seconds from a `stat` file of proc(5).
    private static func cpuSeconds(statFile: String) -> (user: Double, system: Double)? {
        guard let stat = try? String(contentsOfFile: statFile, encoding: .utf8),
              // Fields after the command name, which is in parentheses and may hold spaces.
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Counting from the state field (field 3 of proc(5)): utime is field 14, stime 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user / ticks, system / ticks)
    }
}
