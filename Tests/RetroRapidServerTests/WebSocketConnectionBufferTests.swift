import Testing
@testable import RetroRapidServer

/// What a connection holds between callbacks: the bounded outgoing queue and the message that
/// arrives in fragments.
@Suite("WebSocket connection buffers")
struct WebSocketConnectionBufferTests {
    @Test func theOutgoingQueueIsBoundedAndKeepsOrder() {
        var queue = WebSocketOutgoingQueue(capacity: 3)
        let accepted = [[1], [2], [3], [4]].map { queue.append($0 as [UInt8]) }
        #expect(accepted == [true, true, true, false])  // full: the caller drops the client
        let first = queue.popFirst()
        #expect(first == [1])
        let fifth = queue.append([5])
        #expect(fifth)
        let rest = [queue.popFirst(), queue.popFirst(), queue.popFirst(), queue.popFirst()]
        #expect(rest == [[2], [3], [5], nil] && queue.isEmpty)
    }

    @Test func theQueueStaysCorrectOverManyMessages() {
        var queue = WebSocketOutgoingQueue(capacity: 4000)
        var expected = 0
        var inOrder = true
        for value in 0..<10_000 {
            inOrder = queue.append([UInt8(truncatingIfNeeded: value)]) && inOrder
            if value % 3 != 0 {
                inOrder = queue.popFirst() == [UInt8(truncatingIfNeeded: expected)] && inOrder
                expected += 1
            }
        }
        #expect(inOrder)
        #expect(queue.count == 10_000 - expected)
    }

    func append(_ message: inout WebSocketIncomingMessage, _ text: String, final: Bool, remaining: UInt = 0)
        -> WebSocketIncomingMessage.Result {
        Array(text.utf8).withUnsafeBytes { message.append($0, isFinal: final, remaining: remaining) }
    }

    @Test func fragmentsAreJoinedIntoOneMessage() {
        var message = WebSocketIncomingMessage(limit: 100)
        #expect(append(&message, #"{"type":"#, final: false) == .incomplete)
        #expect(append(&message, #""ping"}"#, final: true) == .message(Array(#"{"type":"ping"}"#.utf8)))
        #expect(append(&message, "next", final: true) == .message(Array("next".utf8)))  // a fresh start
    }

    @Test func theLimitCountsEveryFragmentAndWhatTheFrameAnnounces() {
        var message = WebSocketIncomingMessage(limit: 10)
        #expect(append(&message, "12345", final: false) == .incomplete)
        #expect(append(&message, "123456", final: true) == .tooLarge)  // 11 bytes over two fragments
        #expect(append(&message, "123", final: false, remaining: 8) == .tooLarge)  // announced: 11
        #expect(append(&message, "1234567890", final: true) == .message(Array("1234567890".utf8)))
    }

    /// `remaining` is the peer's own length field: any value, up to `UInt.max`, is refused
    /// without trapping, after any fragment.
    @Test(arguments: [UInt.max, UInt(Int.max), UInt(Int.max) + 1, UInt(Int.max) - 7, UInt(Int.max) / 2 + 1, 1 << 32, 11, 9])
    func anAnnouncedLengthOfAnySizeIsRefusedNotAdded(remaining: UInt) {
        var message = WebSocketIncomingMessage(limit: 10)
        #expect(append(&message, "1234", final: false) == .incomplete)
        #expect(append(&message, "5", final: false, remaining: remaining) == .tooLarge)
        #expect(append(&message, "{}", final: false, remaining: remaining) == .tooLarge)  // a fresh message
        #expect(append(&message, "1234567890", final: true) == .message(Array("1234567890".utf8)))
    }

    @Test func theLastByteThatFitsIsKeptAndOneMoreIsNot() {
        var message = WebSocketIncomingMessage(limit: 10)
        #expect(append(&message, "1234", final: false, remaining: 6) == .incomplete)
        #expect(append(&message, "567890", final: true) == .message(Array("1234567890".utf8)))
        #expect(append(&message, "1234", final: false, remaining: 7) == .tooLarge)
    }
}
