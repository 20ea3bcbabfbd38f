/// The messages waiting to be written to one client, oldest first, at most `capacity` of
/// them: a client that does not read must not make the server hold its messages without end
/// (docs/LIBWEBSOCKETS-4.1.6.md). Each message is the bytes `lws_write` takes, headroom included:
/// the connection's own, or a message encoded once for several receivers.
/// Pure; `WebSocketConnection` owns one on the service thread.
struct WebSocketOutgoingQueue {
    enum Message: Equatable, ExpressibleByArrayLiteral {
        /// Encoded for this connection alone.
        case own([UInt8])
        /// Encoded once, queued to several connections.
        case shared(WebSocketSharedMessage)

        /// A connection's own bytes, written as they are.
        init(arrayLiteral bytes: UInt8...) {
            self = .own(bytes)
        }

        /// Own bytes are equal by content, a shared message only to itself.
        static func == (lhs: Message, rhs: Message) -> Bool {
            switch (lhs, rhs) {
            case (.own(let a), .own(let b)): a == b
            case (.shared(let a), .shared(let b)): a === b
            default: false
            }
        }
    }

    let capacity: Int
    private var messages: [Message] = []
    /// The next message; taking one moves this instead of shifting the array.
    private var head = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a queue holds at least one message")
        self.capacity = capacity
    }

    var count: Int { messages.count - head }
    var isEmpty: Bool { head == messages.count }

    /// Adds a message; false when the queue is full (the message is not added).
    mutating func append(_ message: [UInt8]) -> Bool {
        append(.own(message))
    }

    /// Adds a message; false when the queue is full (the message is not added).
    mutating func append(_ message: Message) -> Bool {
        guard count < capacity else { return false }
        messages.append(message)
        return true
    }

    /// Takes the oldest message.
    mutating func popFirst() -> Message? {
        guard head < messages.count else { return nil }
        let message = messages[head]
        messages[head] = .own([])
        head += 1
        if head == messages.count {
            messages.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= messages.count {
            messages.removeFirst(head)
            head = 0
        }
        return message
    }

    mutating func removeAll() {
        messages.removeAll()
        head = 0
    }
}
