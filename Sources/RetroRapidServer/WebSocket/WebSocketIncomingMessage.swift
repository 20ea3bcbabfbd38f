/// A message arriving in fragments, counted against the size limit across all of them:
/// libwebsockets has no limit of its own. Pure; one per connection.
struct WebSocketIncomingMessage {
    let limit: Int
    private var bytes: [UInt8] = []

    init(limit: Int) {
        self.limit = limit
    }

    enum Result: Equatable {
        /// More fragments are coming.
        case incomplete
        case message([UInt8])
        /// Past the limit, counting what came and what the frame still announces.
        case tooLarge
    }

    /// One fragment; `remaining` is what the current frame still holds after it, so an
    /// oversized frame is refused before it has all been read.
    /// `remaining` comes from the peer's frame header (up to 2^63 − 1), so the sizes are
    /// compared by what room is left, never added: a sum could overflow and trap.
    mutating func append(_ fragment: UnsafeRawBufferPointer, isFinal: Bool, remaining: Int) -> Result {
        let room = limit - bytes.count  // never negative: only what fits is kept
        guard remaining >= 0, fragment.count <= room, remaining <= room - fragment.count else {
            bytes = []
            return .tooLarge
        }
        bytes.append(contentsOf: fragment)
        guard isFinal && remaining == 0 else { return .incomplete }
        defer { bytes = [] }
        return .message(bytes)
    }
}
