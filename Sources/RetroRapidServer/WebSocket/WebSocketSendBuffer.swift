import RetroRapidLWS

/// The one buffer in which every message written straight away is encoded: a step goes out
/// without allocating (a malloc and free of an array per message showed up as libc in a
/// large share of the server's profile samples).
///
/// Sharing one buffer between connections is safe because libwebsockets is done with it when
/// `lws_write` returns: whatever the socket does not take at once, it copies to the
/// connection's own `buflist_out` and sends from there (lws-write.h, "Truncated Writes";
/// `lws_issue_raw` in 4.1.6), and we use no extension that would keep a pointer.
///
/// Threading rule: service thread only (the `ConnectionRegistry` owns it).
final class WebSocketSendBuffer {
    private var storage: [UInt8] = []
    /// Where steps and moves' answers are written (`HotMessageWriter`): headroom, then room for
    /// the longest.
    private let hotMemory: UnsafeMutablePointer<UInt8>
    private static let hotMemoryCount = LWSConnection.headroom + HotMessageWriter.maximumLength

    init(capacity: Int = 1024) {
        storage.reserveCapacity(capacity)
        hotMemory = .allocate(capacity: Self.hotMemoryCount)
        hotMemory.initialize(repeating: 0, count: Self.hotMemoryCount)
    }

    deinit {
        hotMemory.deallocate()
    }

    /// Encodes `message` after libwebsockets' `LWS_PRE` headroom and gives `body` the buffer
    /// (headroom included) for one `lws_write`. A step or a `moved`, the messages sent most by
    /// far, is written by `HotMessageWriter` into memory of its own.
    func withEncoded<Result>(_ message: ServerMessage,
                             _ body: (UnsafeMutableBufferPointer<UInt8>) -> Result) -> Result {
        let headroom = LWSConnection.headroom
        if let count = HotMessageWriter.write(message, to: hotMemory + headroom) {
            return body(UnsafeMutableBufferPointer(start: hotMemory, count: headroom + count))
        }
        var writer = JSONWriter(reusing: takeStorage(), headroom: LWSConnection.headroom)
        message.encode(into: &writer)
        storage = writer.takeBytes()
        return storage.withUnsafeMutableBufferPointer { body($0) }
    }

    /// Moves the array out, so the writer holds its only reference and appends in place.
    private func takeStorage() -> [UInt8] {
        let bytes = storage
        storage = []
        return bytes
    }
}
