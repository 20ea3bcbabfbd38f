import CLibWebSockets
import Foundation
import Synchronization

/// libwebsockets logs through one process-wide emit function; ours keeps errors and warnings.
///
/// libwebsockets calls the emit function on whichever thread is inside it at the time (the
/// service thread, for a server). A caller that turns a known failure into its own clear
/// message can hold back what libwebsockets says on its thread meanwhile
/// (``holdingMessages(_:keep:)``): a port in use then reads once, in our words, instead of
/// after three libwebsockets "ERROR on binding" lines that look like a crash.
public enum LWSLogging {
    /// Messages held back, per thread that asked.
    private static let held = Mutex<[pthread_t: [String]]>([:])

    private static let configured: Void = {
        lws_set_log_level(LLL_ERR | LLL_WARN) { level, line in
            guard let line else { return }
            var text = String(cString: line)
            while text.last?.isNewline == true { text.removeLast() }
            let label = level & LLL_ERR != 0 ? "error" : "warning"
            LWSLogging.emit("libwebsockets \(label): \(text)\n")
        }
    }()

    public static func configureOnce() {
        _ = configured
    }

    /// Runs `body` with libwebsockets' messages on this thread held back, then writes them
    /// unless `keep(result)` says they only repeat what the caller will report itself.
    public static func holdingMessages<T>(_ body: () -> T, keep: (T) -> Bool) -> T {
        let thread = pthread_self()
        held.withLock { $0[thread] = [] }
        let result = body()
        let lines = held.withLock { $0.removeValue(forKey: thread) } ?? []
        if keep(result) {
            for line in lines { write(line) }
        }
        return result
    }

    private static func emit(_ line: String) {
        let thread = pthread_self()
        let kept = held.withLock { (held: inout [pthread_t: [String]]) -> Bool in
            guard held[thread] != nil else { return false }
            held[thread]!.append(line)
            return true
        }
        if !kept { write(line) }
    }

    private static func write(_ line: String) {
        FileHandle.standardError.write(Data(line.utf8))
    }
}
