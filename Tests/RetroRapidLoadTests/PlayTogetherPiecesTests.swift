import Foundation
import Testing
@testable import RetroRapidLoad

/// The race and watch tests' pure parts: reading the room, race and watch messages as the
/// server writes them (docs/PROTOCOL.md), writing the client's, who sits where, and the limits.
@Suite("Load generator: rooms, races and watching")
struct PlayTogetherPiecesTests {
    private func scan<T>(_ text: String, _ body: (MessageScanner) -> T) -> T {
        Array(text.utf8).withUnsafeBytes { body(MessageScanner($0)) }
    }

    private func written(capacity: Int = 256, _ write: (inout MessageWriter) -> Void) -> String {
        var bytes = [UInt8](repeating: 0, count: capacity)
        return bytes.withUnsafeMutableBytes { buffer in
            var writer = MessageWriter(buffer.baseAddress!, capacity: capacity)
            write(&writer)
            #expect(!writer.overflowed)
            return String(decoding: buffer.prefix(writer.count), as: UTF8.self)
        }
    }

    static let lobby = #"{"type":"room","room":{"code":"K7QXM2","link":"/race.html?room=K7QXM2","level":"rapid","seats":4,"practice":false,"quick":false,"state":"lobby","hostSeat":0,"you":1,"racers":[{"seat":0,"name":"Ada","ready":true,"connected":true},{"seat":1,"name":"Bo","ready":false,"connected":true},{"seat":3,"name":"Cy","ready":true,"connected":false}],"watchers":0,"race":1}}"#

    @Test func readsARoomMessage() throws {
        let room = try #require(scan(Self.lobby) { RoomMessage($0) })
        #expect(room.code == "K7QXM2")
        #expect(room.seat == 1)
        #expect(room.state == "lobby")
        #expect(room.seats == 4 && room.racers == 3 && room.ready == 2)
        #expect(!room.canStart)
        // Full and all ready: the host may start; `hostSeat` is not counted as a racer's seat.
        let full = #"{"type":"room","room":{"code":"AB12CD","level":"fast","seats":2,"state":"lobby","hostSeat":0,"you":0,"racers":[{"seat":0,"name":"Load 1","ready":true,"connected":true},{"seat":1,"name":"Load 2","ready":true,"connected":true}],"watchers":2,"race":3}}"#
        let ready = try #require(scan(full) { RoomMessage($0) })
        #expect(ready.racers == 2 && ready.ready == 2 && ready.canStart)
        // The same room counting down, and a watcher's view (`you` null), cannot be started.
        let counting = full.replacingOccurrences(of: #""state":"lobby""#, with: #""state":"countdown""#)
        #expect(scan(counting) { RoomMessage($0) }?.canStart == false)
        let watcher = full.replacingOccurrences(of: #""you":0"#, with: #""you":null"#)
        #expect(scan(watcher) { RoomMessage($0) }?.seat == nil)
        // Anything but a room message, or one without its code, is not read as one.
        #expect(scan(#"{"type":"roomLeft","code":"K7QXM2","reason":"closed"}"#) { RoomMessage($0) } == nil)
        #expect(scan(#"{"type":"room","room":{"state":"lobby","seats":4}}"#) { RoomMessage($0) } == nil)
    }

    @Test func tellsTheRaceAndWatchMessagesApart() {
        let kinds: [(String, ServerMessageKind)] = [
            (Self.lobby, .room),
            (#"{"type":"roomLeft","code":"K7QXM2","reason":"left"}"#, .roomLeft),
            (#"{"type":"countdown","code":"K7QXM2","startsInMs":3000}"#, .countdown),
            (#"{"type":"standings","code":"K7QXM2","racers":[{"seat":0,"name":"Ada","gameId":"a1","score":12,"lane":1,"step":40,"state":"racing","place":1}]}"#, .standings),
            (#"{"type":"raceOver","code":"K7QXM2","raceId":"r1","results":[{"place":1,"seat":2,"name":"Bo","gameId":"b2","score":40,"reason":"crash"}]}"#, .raceOver),
            (#"{"type":"watchEnded","gameId":"d7","reason":"crash","score":42}"#, .watchEnded),
            (#"{"type":"watchers","gameId":"d7","count":3}"#, .other),
            (#"{"type":"queue","level":"rapid","waiting":3,"startsInMs":7000}"#, .other),
        ]
        for (text, kind) in kinds {
            #expect(scan(text) { $0.kind } == kind, "\(text)")
        }
    }

    @Test func readsTheGameAWatcherJoins() {
        let watching = #"{"type":"watching","gameId":"d7043122b71bd216","player":{"name":"Ada"},"room":"K7QXM2","game":{"gameId":"d7043122b71bd216","level":"rapid","practice":false,"race":"K7QXM2","step":12,"grid":[[0,0,0],[1,0,0],[0,0,0],[0,0,1],[0,0,0],[0,1,0],[0,0,0]],"lane":2,"score":5,"interval":420,"speedStage":0,"safeLanes":[1,2],"paused":false},"watchers":3}"#
        scan(watching) { message in
            #expect(message.kind == .watching)
            #expect(message.integer("step") == 12)
            #expect(message.integer("interval") == 420)
            #expect(message.string("gameId") == "d7043122b71bd216")
        }
        // A racer's `started` names its game first, before the race's code.
        let started = #"{"type":"started","game":{"gameId":"e1","level":"fast","practice":false,"race":"K7QXM2","step":0,"lane":1,"interval":600},"quota":null}"#
        scan(started) { #expect($0.kind == .started && $0.string("gameId") == "e1") }
    }

    @Test func countsOccurrencesWithoutOverlapsOrStrays() {
        scan(#"{"a":"aaaa"}"#) { #expect($0.occurrences(of: "aa") == 2) }
        scan(#"{"ready":true,"ready":false,"ready":true}"#) { #expect($0.occurrences(of: "\"ready\":true") == 2) }
        scan("") { #expect($0.occurrences(of: "x") == 0) }
        scan("ab") { #expect($0.occurrences(of: "abc") == 0) }
    }

    @Test func writesTheRoomAndWatchMessages() throws {
        let messages = [
            written { PlayTogetherMessages.openRoom(&$0, level: "fast", seats: 8) },
            written { PlayTogetherMessages.joinRoom(&$0, code: Array("K7QXM2".utf8)) },
            written { PlayTogetherMessages.ready(&$0) },
            written { PlayTogetherMessages.startRace(&$0) },
            written { PlayTogetherMessages.watch(&$0, room: Array("K7QXM2".utf8), seat: 3) },
            written { PlayTogetherMessages.watch(&$0, gameId: Array("d7043122b71bd216".utf8)) },
        ]
        #expect(messages == [
            #"{"type":"openRoom","level":"fast","seats":8,"practice":false}"#,
            #"{"type":"joinRoom","code":"K7QXM2"}"#,
            #"{"type":"ready","ready":true}"#,
            #"{"type":"startRace"}"#,
            #"{"type":"watch","room":"K7QXM2","seat":3}"#,
            #"{"type":"watch","gameId":"d7043122b71bd216"}"#,
        ])
        // Each is one JSON object, as the server's reader wants.
        for message in messages {
            let object = try JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any]
            #expect(object?["type"] is String, "\(message)")
        }
        // A message that does not fit is cut and says so (the connection is then closed).
        var small = [UInt8](repeating: 0, count: 20)
        small.withUnsafeMutableBytes { buffer in
            var writer = MessageWriter(buffer.baseAddress!, capacity: 20)
            PlayTogetherMessages.openRoom(&writer, level: "cruise", seats: 2)
            #expect(writer.overflowed && writer.count == 20)
        }
    }

    @Test func seatsRacersInRoomsAndSpreadsWatchersOverThem() {
        let plan = PlayTogetherPlan(mode: .race, players: 2000, roomSeats: 8, watchers: 1000)
        #expect(plan.rooms == 250)
        #expect(plan.isHost(0) && plan.isHost(8) && !plan.isHost(7) && !plan.isHost(9))
        #expect(plan.room(of: 7) == 0 && plan.room(of: 8) == 1 && plan.room(of: 1999) == 249)
        #expect(plan.members(ofRoom: 1) == 8..<16)
        #expect(plan.isWatcher(2000) && !plan.isWatcher(1999))
        // Every room gets four watchers, each on a different racer of it.
        let lists = plan.watchersByTarget()
        #expect(lists.map(\.count).reduce(0, +) == 1000)
        for room in 0..<250 {
            let watched = plan.members(ofRoom: room).filter { !lists[$0].isEmpty }
            #expect(watched.count == 4, "room \(room)")
            #expect(watched.allSatisfy { lists[$0].count == 1 })
        }
        for watcher in 2000..<3000 {
            let target = plan.target(ofWatcher: watcher)
            #expect(target < 2000 && lists[target].contains(watcher))
        }
        // More watchers than racers: round the seats again (each room's first seat first).
        let crowded = PlayTogetherPlan(mode: .race, players: 4, roomSeats: 2, watchers: 10).watchersByTarget()
        #expect(crowded.map(\.count) == [3, 2, 3, 2])
        // Solo: round the players.
        let solo = PlayTogetherPlan(mode: .solo, players: 3, roomSeats: 8, watchers: 4)
        #expect(solo.rooms == 0)
        #expect((3..<7).map { solo.target(ofWatcher: $0) } == [0, 1, 2, 0])
    }

    @Test func refusesRaceAndWatchTestsThatCannotRun() {
        var options = LoadTestOptions()
        options.connections = 16
        options.tokens = Array(repeating: "t", count: 20)
        options.mode = .race
        options.roomSeats = 8
        options.watchers = 4
        #expect(throws: Never.self) { try options.validate() }
        func refusal(_ change: (inout LoadTestOptions) -> Void) -> String? {
            var bad = options
            change(&bad)
            do { try bad.validate(); return nil } catch { return error.description }
        }
        #expect(refusal { $0.roomSeats = 9 }?.contains("between 2 and 8") == true)
        #expect(refusal { $0.roomSeats = 1 }?.contains("between 2 and 8") == true)
        #expect(refusal { $0.roomSeats = 3 }?.contains("whole number of rooms") == true)
        #expect(refusal { $0.watchers = 5 }?.contains("need 21 device tokens") == true)
        #expect(refusal { $0.watchers = -1 } != nil)
        #expect(refusal { $0.idle = true }?.contains("--idle") == true)
        #expect(refusal {
            $0.connections = 19_000
            $0.watchers = 1_000
            $0.tokens = Array(repeating: "t", count: 20_000)
        }?.contains("at most 19900") == true)
        // Seats are not checked in a solo test, where there are no rooms.
        #expect(refusal { $0.mode = .solo; $0.roomSeats = 3 } == nil)
    }
}
