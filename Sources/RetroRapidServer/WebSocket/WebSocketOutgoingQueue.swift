/// The messages waiting to be written to one client, oldest first, at most `capacity` of
/// them: a client that does not read must not make the server hold its messages without end
/// (docs/LIBWEBSOCKETS-4.1.6.md). Each message is the bytes `lws_write` takes, headroom included.
/// Pure; `WebSocketConnection` owns one on the service thread.
struct WebSocketOutgoingQueue {
    let capacity: Int
    private var messages: [[UInt8]] = []
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
        guard count < capacity else { return false }
        messages.append(message)
        return true
    }

    /// Takes the oldest message.
    mutating func popFirst() -> [UInt8]? {
        guard head < messages.count else { return nil }
        let message = messages[head]
        messages[head] = []
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
