import Testing
import RetroRapidRules
@testable import RetroRapidServer

@Suite("RoomRegistry")
struct RoomRegistryTests {
    func registry(maxRooms: Int = 10, seed: UInt64 = 1) -> RoomRegistry {
        var random = SplitMix64(seed: seed)
        return RoomRegistry(maxRooms: maxRooms, random: { random.next() })
    }

    func refusal<T>(_ body: () throws -> T) -> ProtocolError.Code? {
        do { _ = try body(); return nil } catch { return (error as? RoomRefusal)?.code }
    }

    @Test func roomsAreFoundByCodeAsTypedAndByPlayer() throws {
        let registry = registry()
        let room = try registry.open(level: .fast, seats: 3, practice: true, quick: false, hostID: 1, hostName: "Ada")
        let typed = room.code.text.lowercased().prefix(3) + "-" + room.code.text.suffix(3)
        let (joined, seat) = try registry.join(typed: String(typed), playerID: 2, name: "Bo")
        #expect(joined === room && seat == 1)
        #expect(registry.room(of: 2) === room && registry.room(room.code) === room)
        #expect(room.level == .fast && room.seats == 3 && room.practice)
    }

    @Test func wrongCodesAndSecondRoomsAreRefused() throws {
        let registry = registry()
        let room = try registry.open(level: .rapid, seats: 4, practice: false, quick: false, hostID: 1, hostName: "Ada")
        let other = try registry.open(level: .rapid, seats: 4, practice: false, quick: false, hostID: 5, hostName: "Eve")
        #expect(refusal { try registry.join(typed: "nonsense", playerID: 2, name: "Bo") } == .roomNotFound)
        let unused = (RoomCode.alphabet.map { String(repeating: String($0), count: 6) }).first {
            registry.room(RoomCode(reading: $0)!) == nil
        }!
        #expect(refusal { try registry.join(typed: unused, playerID: 2, name: "Bo") } == .roomNotFound)
        #expect(refusal { try registry.join(typed: room.code.text, playerID: 1, name: "Ada") } == .alreadyInRoom)
        #expect(refusal { try registry.join(typed: other.code.text, playerID: 1, name: "Ada") } == .alreadyInRoom)
        #expect(refusal {
            try registry.open(level: .rapid, seats: 4, practice: false, quick: false, hostID: 1, hostName: "Ada")
        } == .alreadyInRoom)
        #expect(room.racers.count == 1 && other.racers.count == 1 && registry.count == 2)
    }

    @Test func theLastOneOutClosesTheRoom() throws {
        let registry = registry()
        let room = try registry.open(level: .rapid, seats: 4, practice: false, quick: false, hostID: 1, hostName: "Ada")
        _ = try registry.join(typed: room.code.text, playerID: 2, name: "Bo")
        #expect(try registry.leave(playerID: 1).closed == false)
        #expect(registry.room(of: 1) == nil && room.hostSeat == 1)
        #expect(try registry.leave(playerID: 2).closed == true)
        #expect(registry.room(room.code) == nil && registry.count == 0)
        #expect(refusal { try registry.leave(playerID: 2) } == .notInRoom)
    }

    @Test func noMoreThanMaxRooms() throws {
        let registry = registry(maxRooms: 2)
        for id in Int64(1)...2 {
            _ = try registry.open(level: .rapid, seats: 2, practice: false, quick: false, hostID: id, hostName: "P\(id)")
        }
        #expect(refusal {
            try registry.open(level: .rapid, seats: 2, practice: false, quick: false, hostID: 3, hostName: "P3")
        } == .tooManyRooms)
        #expect(registry.room(of: 3) == nil)
        _ = try registry.leave(playerID: 1)
        _ = try registry.open(level: .rapid, seats: 2, practice: false, quick: false, hostID: 3, hostName: "P3")
    }

    @Test func aCodeInUseHereOrElsewhereIsNeverHandedOutAgain() throws {
        // The same seed draws the same first code: the second registry must skip it.
        let first = try registry(seed: 9).open(level: .rapid, seats: 2, practice: false, quick: false, hostID: 1, hostName: "A")
        let second = try registry(seed: 9).open(level: .rapid, seats: 2, practice: false, quick: false, hostID: 1,
                                                 hostName: "A", isTaken: { $0 == first.code })
        #expect(first.code != second.code)
        // And within one registry, a repeated draw is skipped.
        var values: [UInt64] = [5, 5, 6]
        let registry = RoomRegistry(maxRooms: 5, random: { values.removeFirst() })
        let a = try registry.open(level: .rapid, seats: 2, practice: false, quick: false, hostID: 1, hostName: "A")
        let b = try registry.open(level: .rapid, seats: 2, practice: false, quick: false, hostID: 2, hostName: "B")
        #expect(a.code == RoomCode(random: { 5 }) && b.code == RoomCode(random: { 6 }))
    }
}
