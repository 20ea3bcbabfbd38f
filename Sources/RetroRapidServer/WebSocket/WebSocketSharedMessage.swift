/// One message encoded once for several receivers (a seat's player and its watchers, every
/// receiver of a match): each connection writes it from, or queues a reference to, these same
/// bytes, so a watcher costs the write of its frame and nothing more.
///
/// Sharing is safe for the same reason the `WebSocketSendBuffer` is: `lws_write` writes only
/// the frame header into the `LWSConnection.headroom` before the payload (the same header for
/// the same payload, as a server does not mask) and is done with the buffer when it returns,
/// copying what the socket does not take to the connection's own list. A class, so a queued
/// reference never copies the bytes when the write reaches them.
///
/// Threading rule: service thread only.
final class WebSocketSharedMessage {
    /// The encoded message after `LWSConnection.headroom` bytes of headroom.
    private var bytes: [UInt8]

    init(_ message: ServerMessage, headroom: Int) {
        bytes = message.encoded(headroom: headroom)
    }

    /// Gives `body` the buffer, headroom included, for one `lws_write`.
    func withBuffer<Result>(_ body: (UnsafeMutableBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeMutableBufferPointer { body($0) }
    }
}
