import Testing
import RetroRapidRules
@testable import RetroRapidServer

@Suite("QuickRaceQueue")
struct QuickRaceQueueTests {
    let second: Int64 = 1_000_000

    @Test func twoWaitingFormARoomWhenTheWaitFromTheSecondArrivalEnds() throws {
        var queue = QuickRaceQueue(waitMicroseconds: 10 * second)
        #expect(try queue.join(playerID: 1, name: "Ada", level: .rapid, now: 0) == nil)
        #expect(queue.startsAt(.rapid) == nil)
        #expect(queue.due(now: 100 * second).isEmpty)  // one alone never races
        #expect(try queue.join(playerID: 2, name: "Bo", level: .rapid, now: 100 * second) == nil)
        #expect(queue.startsAt(.rapid) == 110 * second && queue.nextDeadline == 110 * second)
        #expect(try queue.join(playerID: 3, name: "Cy", level: .rapid, now: 105 * second) == nil)
        #expect(queue.startsAt(.rapid) == 110 * second)  // the third does not restart the wait
        #expect(queue.due(now: 110 * second - 1).isEmpty)
        let formed = queue.due(now: 110 * second)
        #expect(formed == [.init(level: .rapid, players: [.init(playerID: 1, name: "Ada"), .init(playerID: 2, name: "Bo"),
                                                           .init(playerID: 3, name: "Cy")])])
        #expect(queue.players(at: .rapid).isEmpty && queue.level(of: 1) == nil && queue.nextDeadline == nil)
    }

    @Test func eightFormARoomAtOnceAndLevelsWaitApart() throws {
        var queue = QuickRaceQueue(waitMicroseconds: 10 * second)
        _ = try queue.join(playerID: 100, name: "Slow", level: .cruise, now: 0)
        for id in Int64(1)...7 {
            #expect(try queue.join(playerID: id, name: "P\(id)", level: .rapid, now: id) == nil)
        }
        let formed = try queue.join(playerID: 8, name: "P8", level: .rapid, now: 8)
        #expect(formed?.players.map(\.playerID) == Array(1...8))
        #expect(queue.players(at: .rapid).isEmpty)
        #expect(queue.level(of: 100) == .cruise && queue.startsAt(.cruise) == nil)
    }

    @Test func leavingBelowTwoStopsTheWaitAndJoiningTwiceIsRefused() throws {
        var queue = QuickRaceQueue(waitMicroseconds: 10 * second)
        _ = try queue.join(playerID: 1, name: "Ada", level: .fast, now: 0)
        #expect(throws: RoomRefusal.alreadyInQueue) { try queue.join(playerID: 1, name: "Ada", level: .rapid, now: 1) }
        _ = try queue.join(playerID: 2, name: "Bo", level: .fast, now: 2 * second)
        #expect(try queue.leave(playerID: 2) == .fast)
        #expect(queue.startsAt(.fast) == nil)
        #expect(throws: RoomRefusal.notInQueue) { try queue.leave(playerID: 2) }
        _ = try queue.join(playerID: 3, name: "Cy", level: .fast, now: 5 * second)
        #expect(queue.startsAt(.fast) == 15 * second)  // the wait runs from the new second arrival
        #expect(queue.due(now: 15 * second).first?.players.map(\.playerID) == [1, 3])
    }
}
