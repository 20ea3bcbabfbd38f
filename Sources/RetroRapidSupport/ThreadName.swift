#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the calling thread (at most 15 bytes on Linux) so `top -H`, `ps -L` and `perf` tell
/// the server's threads apart. Best effort: a name that cannot be set changes nothing else.
public func nameCurrentThread(_ name: String) {
    #if os(Linux)
    // Glibc's pthread_setname_np and the variadic prctl are not visible from Swift; the
    // kernel takes the same name through the thread's own `comm` file.
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    #elseif canImport(Darwin)
    _ = pthread_setname_np(name)
    #endif
}
