/// A message arriving in fragments, counted against the size limit across all of them:
/// libwebsockets has no limit of its own. Pure; one per connection. Package-wide for its fuzz
/// target (Sources/RetroRapidFuzz/FragmentAssemblyFuzzTarget.swift).
package struct WebSocketIncomingMessage {
    package let limit: Int
    private var bytes: [UInt8] = []

    /// `limit` is at least 1 (`--max-message-bytes` is checked at startup).
    package init(limit: Int) {
        self.limit = limit
    }

    package enum Result: Equatable {
        /// More fragments are coming.
        case incomplete
        case message([UInt8])
        /// Past the limit, counting what came and what the frame still announces.
        case tooLarge
    }

    /// One fragment; `remaining` is what the current frame still holds after it, so an
    /// oversized frame is refused before it has all been read. `remaining` is the peer's own
    /// length field (any value below 2^63), so it is compared with the room that is left and
    /// never added or converted: a sum could overflow and trap.
    package mutating func append(_ fragment: UnsafeRawBufferPointer, isFinal: Bool, remaining: UInt) -> Result {
        let room = limit - bytes.count  // never negative: only what fits is kept
        guard fragment.count <= room, remaining <= UInt(room - fragment.count) else {
            bytes = []
            return .tooLarge
        }
        bytes.append(contentsOf: fragment)
        guard isFinal && remaining == 0 else { return .incomplete }
        defer { bytes = [] }
        return .message(bytes)
    }
}
