import Testing
import RetroRapidRules
@testable import RetroRapidServer

@Suite("RaceRoom")
struct RaceRoomTests {
    let code = RoomCode(reading: "ABCDEF")!

    func room(seats: Int = 4) -> RaceRoom {
        RaceRoom(code: code, level: .rapid, seats: seats, practice: false, quick: false, hostID: 1, hostName: "Ada")
    }

    func refusal(_ body: () throws -> Void) -> ProtocolError.Code? {
        do { try body(); return nil } catch { return (error as? RoomRefusal)?.code }
    }

    @Test func theOpenerHostsInSeatZeroAndJoinersTakeTheLowestFreeSeat() throws {
        let room = room()
        #expect(room.hostSeat == 0 && room.racers.map(\.seat) == [0])
        #expect(try room.join(playerID: 2, name: "Bo") == 1)
        #expect(try room.join(playerID: 3, name: "Cy") == 2)
        _ = try room.leave(playerID: 2)
        #expect(try room.join(playerID: 4, name: "Di") == 1)
        #expect(room.racers.map(\.name) == ["Ada", "Di", "Cy"])
        #expect(room.state == .lobby && room.race == 1)
    }

    @Test func aFullRoomAndJoiningTwiceAreRefusedAndChangeNothing() throws {
        let room = room(seats: 2)
        try room.join(playerID: 2, name: "Bo")
        #expect(refusal { try room.join(playerID: 3, name: "Cy") } == .roomFull)
        #expect(refusal { try room.join(playerID: 2, name: "Bo") } == .alreadyInRoom)
        #expect(room.racers.map(\.playerID) == [1, 2])
    }

    @Test func startNeedsTheHostTwoRacersAndEveryOtherRacerReady() throws {
        let room = room()
        #expect(refusal { _ = try room.checkStart(by: 1) } == .notReady)  // alone
        try room.join(playerID: 2, name: "Bo")
        try room.join(playerID: 3, name: "Cy")
        #expect(refusal { _ = try room.checkStart(by: 2) } == .notHost)
        #expect(refusal { _ = try room.checkStart(by: 9) } == .notInRoom)
        do {
            _ = try room.checkStart(by: 1)
            Issue.record("started with nobody ready")
        } catch {
            #expect(error.code == .notReady)
            #expect(error.message.contains("Bo") && error.message.contains("Cy") && !error.message.contains("Ada"))
        }
        try room.setReady(playerID: 2, true)
        try room.setReady(playerID: 3, true)
        #expect(try room.checkStart(by: 1).map(\.seat) == [0, 1, 2])
        #expect(room.state == .lobby)  // checking changes nothing
    }

    @Test func aRunningRaceRefusesJoinsReadinessAndStarts() throws {
        let room = room()
        try room.join(playerID: 2, name: "Bo")
        try room.setReady(playerID: 2, true)
        room.beginStart()
        #expect(refusal { try room.join(playerID: 3, name: "Cy") } == .raceRunning)
        #expect(refusal { _ = try room.checkStart(by: 1) } == .raceRunning)
        room.beginCountdown(seats: [1, 0])
        #expect(room.raceSeats == [0, 1] && room.state == .countdown && !room.starting)
        #expect(refusal { try room.setReady(playerID: 2, false) } == .raceRunning)
        room.beginRacing()
        #expect(refusal { try room.join(playerID: 3, name: "Cy") } == .raceRunning)
        room.finish()
        #expect(room.state == .finished)
        #expect(refusal { try room.join(playerID: 3, name: "Cy") } == .raceRunning)
    }

    @Test func aRematchIsTheNextRaceWithNobodyReady() throws {
        let room = room()
        try room.join(playerID: 2, name: "Bo")
        try room.setReady(playerID: 2, true)
        room.beginStart()
        room.beginCountdown(seats: [0, 1])
        room.beginRacing()
        room.finish()
        room.backToLobby()
        #expect(room.state == .lobby && room.race == 2 && room.raceSeats.isEmpty)
        #expect(room.racers.allSatisfy { !$0.ready })
        try room.join(playerID: 3, name: "Cy")
        #expect(room.code == code)
    }

    @Test func aCancelledStartLeavesTheLobbyAsItWas() throws {
        let room = room()
        try room.join(playerID: 2, name: "Bo")
        try room.setReady(playerID: 2, true)
        room.beginStart()
        room.unready(playerID: 2)
        room.cancelStart()
        #expect(room.state == .lobby && room.race == 1 && !room.isBusy)
        #expect(room.racer(2)?.ready == false)
    }

    @Test func theHostPassesToTheLowestSeatLeftAndLeavingARaceSaysSo() throws {
        let room = room()
        try room.join(playerID: 2, name: "Bo")
        try room.join(playerID: 3, name: "Cy")
        try room.setReady(playerID: 2, true)
        try room.setReady(playerID: 3, true)
        room.beginStart()
        room.beginCountdown(seats: [0, 1, 2])
        let departure = try room.leave(playerID: 1)
        #expect(departure == RaceRoom.Departure(seat: 0, wasRacing: true, newHostSeat: 1))
        #expect(room.hostRacer?.name == "Bo" && room.raceSeats == [1, 2])
        #expect(try room.leave(playerID: 3) == RaceRoom.Departure(seat: 2, wasRacing: true, newHostSeat: nil))
        #expect(refusal { _ = try room.leave(playerID: 3) } == .notInRoom)
        _ = try room.leave(playerID: 2)
        #expect(room.isEmpty && room.hostSeat == nil)
    }
}
