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
    mutating func append(_ fragment: UnsafeRawBufferPointer, isFinal: Bool, remaining: Int) -> Result {
        guard bytes.count + fragment.count + remaining <= limit else {
            bytes = []
            return .tooLarge
        }
        bytes.append(contentsOf: fragment)
        guard isFinal && remaining == 0 else { return .incomplete }
        defer { bytes = [] }
        return .message(bytes)
    }
}
