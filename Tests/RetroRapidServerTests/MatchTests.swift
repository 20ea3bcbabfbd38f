import Foundation
import RetroRapidRules
import Testing
@testable import RetroRapidServer

/// A `Match` of seats, without a server: its seats' addresses and drivers, its one wake time
/// (the earliest of its seats'), when it is over, and the outgoing queue holding a message
/// encoded once for several receivers.
@Suite("Match")
struct MatchTests {
    static let start: Int64 = 1_000_000_000

    func session(id: Int, player: Int64, level: SpeedLevel, now: Int64 = start) -> GameSession {
        GameSession(id: id, gameID: "g\(id)", playerID: player, level: level, seed: 9, practice: true,
                    graceLimitMilliseconds: 150, startedAt: Date(timeIntervalSince1970: 1_800_000_000), now: now)
    }

    @Test func aSoloMatchIsOneSeatItsPlayersGameDrives() {
        let match = Match(id: 5, gameID: "g5", playerID: 42, level: .fast, seed: 9, practice: false,
                          graceLimitMilliseconds: 150, startedAt: Date(), now: Self.start)
        #expect(match.kind == .solo && match.startsAt == Self.start && match.seats.count == 1)
        let seat = match.seats[0]
        #expect(seat.address == MatchSeat.Address(match: 5, seat: 0))
        #expect(seat.session != nil && seat.session === (seat.driver as AnyObject) && seat.playerID == 42)
        #expect(match.wakeAt == seat.session!.wakeAt && match.wakeAt != nil)
        #expect(match.movableSeat === seat)
        #expect(match.seat(at: MatchSeat.Address(match: 5, seat: 1)) == nil)
        #expect(match.seat(at: MatchSeat.Address(match: 6, seat: 0)) == nil)
    }

    @Test func aMatchWakesForItsEarliestSeatAndEndsWithItsLastSeat() {
        // A faster level steps sooner: its seat is the one due first.
        let slow = session(id: 1, player: 1, level: .cruise)
        let fast = session(id: 2, player: 2, level: .fast)
        let match = Match(id: 3, kind: .race, seed: 9, startsAt: Self.start, drivers: [slow, fast])
        #expect(match.seats.map(\.address.seat) == [0, 1])
        #expect(match.seats.map(\.playerID) == [1, 2])
        #expect(fast.wakeAt! < slow.wakeAt!)
        #expect(match.wakeAt == fast.wakeAt)
        #expect(match.movableSeat == nil)  // a race's seats stay where it runs
        _ = fast.end(.abandoned, now: Self.start + 1)
        #expect(!match.isOver && match.wakeAt == slow.wakeAt)
        _ = slow.end(.abandoned, now: Self.start + 2)
        #expect(match.isOver && match.wakeAt == nil)
    }

    @Test func aQueueHoldsSharedMessagesByReferenceInOrder() {
        var queue = WebSocketOutgoingQueue(capacity: 3)
        let shared = WebSocketSharedMessage(.pong, headroom: 4)
        let accepted = [queue.append([1]), queue.append(.shared(shared)), queue.append(.shared(shared)),
                        queue.append(.shared(shared))]
        #expect(accepted == [true, true, true, false])  // full, as for a connection's own messages
        #expect(queue.popFirst() == [1])
        guard case .shared(let first) = queue.popFirst(), case .shared(let second) = queue.popFirst() else {
            Issue.record("the shared messages are not in the queue")
            return
        }
        #expect(first === shared && second === shared && queue.isEmpty)
        // The bytes after the headroom are the message's one encoding.
        let body = shared.withBuffer { Array($0.dropFirst(4)) }
        #expect(body == ServerMessage.pong.encoded())
    }
}
