import CLibEV
import CLibWebSockets

/// A libev loop made by us and lent to one libwebsockets context as its "foreign" loop
/// (`lws_context_creation_info.foreign_loops`, with LWS_SERVER_OPTION_LIBEV).
///
/// Why not let libwebsockets make the loop: in 4.1.6 a loop it makes can only be left by
/// destroying the context from inside it, and it registers a SIGINT watcher on it, which
/// libev allows for one loop per process (a second context, as in tests, aborts) and which
/// takes Ctrl-C away from the server's own graceful shutdown.
///
/// Threading rule: `run` and `stop` on the context's service thread only (`stop` from a
/// callback, typically LWS_CALLBACK_EVENT_WAIT_CANCELLED); other threads wake that thread
/// with `lws_cancel_service`. Destroy the context before this object.
public final class LWSEventLoop {
    private let loop: OpaquePointer
    /// The one-element array libwebsockets reads the loop from; kept for the context's life.
    public let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    /// Nil when libev cannot make a loop (no usable backend).
    public init?() {
        guard let loop = ev_loop_new(0) else { return nil }  // 0: libev picks epoll on Linux
        self.loop = loop
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))
    }

    deinit {
        ev_loop_destroy(loop)
        foreignLoops.deallocate()
    }

    /// Runs the loop until `stop`.
    public func run() {
        ev_run(loop, 0)
    }

    /// Makes `run` return once the callback in progress is done.
    public func stop() {
        ev_break(loop, Int32(EVBREAK_ALL))
    }
}
