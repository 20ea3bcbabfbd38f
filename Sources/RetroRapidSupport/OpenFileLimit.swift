#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open files, which caps its sockets. Distributions start processes
/// with a soft limit (often 1,024) below the hard one; raising the soft limit needs no
/// privilege. The hard limit on these machines is 20,000 (docs/LIBWEBSOCKETS-4.1.6.md).
public enum OpenFileLimit {
    /// Raises the soft limit to the hard one (at most 1,048,576) and returns the soft limit now.
    @discardableResult
    public static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        let wanted = min(limit.rlim_max, 1_048_576)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return count(limit.rlim_cur)
    }

    /// A limit as a count of files: `rlim_t` is unsigned 64-bit, and `RLIM_INFINITY` (2^64 − 1)
    /// would trap converted to `Int`. Capped at `Int32.max`, which libwebsockets' `unsigned int`
    /// per-thread limit and its `int` descriptors hold.
    static func count(_ limit: rlim_t) -> Int {
        Int(min(limit, rlim_t(Int32.max)))
    }
}
