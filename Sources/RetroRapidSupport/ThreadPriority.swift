#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lowers the calling thread's scheduling priority by `steps` nice levels (at most to 19),
/// and returns the nice value it now runs at, or nil when nothing changed. On Linux a nice
/// value belongs to one thread, and `setpriority(PRIO_PROCESS, 0, …)` sets the caller's
/// (man 2 setpriority, "Bugs"), so the other threads of the process keep theirs. Lowering needs no privilege; 0 steps changes nothing. Best effort:
/// a priority that cannot be set changes nothing else.
@discardableResult
public func lowerCurrentThreadPriority(by steps: Int) -> Int? {
    #if os(Linux)
    guard steps > 0 else { return nil }
    let thread: id_t = 0  // the calling thread
    errno = 0
    let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread)
    guard errno == 0 else { return nil }
    let lowered = min(19, Int(current) + steps)
    guard lowered > Int(current),
          setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, Int32(lowered)) == 0 else { return nil }
    return lowered
    #else
    return nil
    #endif
}
