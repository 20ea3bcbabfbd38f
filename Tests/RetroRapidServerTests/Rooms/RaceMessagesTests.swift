import Foundation
import Testing
import RetroRapidRules
@testable import RetroRapidServer

/// The race rooms' messages on the wire: what the client sends, read as docs/PROTOCOL.md
/// "Race rooms" says (defaults, bounds, refusals naming the field), and what the server sends.
@Suite("Race room messages")
struct RaceMessagesTests {
    func decode(_ text: String) throws(ProtocolError) -> ClientMessage {
        try ClientMessage.decode(Array(text.utf8))
    }

    func refusal(_ text: String) -> ProtocolError? {
        do { _ = try decode(text); return nil } catch { return error }
    }

    @Test func clientMessagesAreReadWithTheirDefaults() throws {
        #expect(try decode(#"{"type":"openRoom","level":"fast"}"#) == .openRoom(level: .fast, seats: 4, practice: false))
        #expect(try decode(#"{"type":"openRoom","level":"rapid","seats":8,"practice":true}"#)
                == .openRoom(level: .rapid, seats: 8, practice: true))
        #expect(try decode(#"{"type":"joinRoom","code":"k7q-xm2"}"#) == .joinRoom(code: "k7q-xm2"))
        #expect(try decode(#"{"type":"ready"}"#) == .ready(true))
        #expect(try decode(#"{"type":"ready","ready":false}"#) == .ready(false))
        #expect(try decode(#"{"type":"startRace","code":7}"#) == .startRace)  // fields it does not use are ignored
        #expect(try decode(#"{"type":"leaveRoom"}"#) == .leaveRoom)
        #expect(try decode(#"{"type":"quickRace","level":"cruise"}"#) == .quickRace(level: .cruise))
        #expect(try decode(#"{"type":"leaveQueue"}"#) == .leaveQueue)
        // `level` and `practice` are still start's too.
        #expect(try decode(#"{"type":"start","level":"fast","practice":true}"#) == .start(level: .fast, practice: true))
    }

    @Test(arguments: [
        (#"{"type":"openRoom","level":"rapid","seats":1}"#, "seats"),
        (#"{"type":"openRoom","level":"rapid","seats":9}"#, "seats"),
        (#"{"type":"openRoom","level":"rapid","seats":"4"}"#, "seats"),
        (#"{"type":"openRoom","level":"warp"}"#, "level"),
        (#"{"type":"openRoom"}"#, "level"),
        (#"{"type":"openRoom","level":"rapid","practice":"yes"}"#, "practice"),
        (#"{"type":"joinRoom"}"#, "code"),
        (#"{"type":"joinRoom","code":""}"#, "code"),
        (#"{"type":"joinRoom","code":123456}"#, "code"),
        (#"{"type":"ready","ready":"yes"}"#, "ready"),
        (#"{"type":"quickRace"}"#, "level"),
    ])
    func badFieldsAreRefusedNamingThem(text: String, field: String) throws {
        let error = try #require(refusal(text))
        #expect(error.code == .badMessage && error.message.contains(field), "\(error)")
        #expect(error.inReplyTo != nil)
    }

    @Test func theRoomMessageHasEveryFieldOfTheProtocol() throws {
        let code = RoomCode(reading: "K7QXM2")!
        let room = RaceRoom(code: code, level: .rapid, seats: 4, practice: false, quick: false, hostID: 1, hostName: "Ada")
        try room.join(playerID: 2, name: "Bo \"B\"")
        try room.setReady(playerID: 2, true)
        let text = String(decoding: ServerMessage.room(RoomView(room, you: 1, watchers: 3)).encoded(), as: UTF8.self)
        #expect(text == #"{"type":"room","room":{"code":"K7QXM2","link":"/race.html?room=K7QXM2","level":"rapid","seats":4,"#
            + #""practice":false,"quick":false,"state":"lobby","hostSeat":0,"you":1,"racers":[{"seat":0,"name":"Ada","#
            + #""ready":false,"connected":true},{"seat":1,"name":"Bo \"B\"","ready":true,"connected":true}],"watchers":3,"race":1}}"#)
        let watcher = String(decoding: ServerMessage.room(RoomView(room, you: nil, watchers: 0)).encoded(), as: UTF8.self)
        #expect(watcher.contains(#""you":null"#))
    }

    @Test func theOtherServerMessagesAreWrittenAsDocumented() throws {
        let code = RoomCode(reading: "K7QXM2")!
        func text(_ message: ServerMessage) -> String { String(decoding: message.encoded(), as: UTF8.self) }
        #expect(text(.roomLeft(code: code, reason: .left)) == #"{"type":"roomLeft","code":"K7QXM2","reason":"left"}"#)
        #expect(text(.countdown(code: code, startsInMilliseconds: 3000)) == #"{"type":"countdown","code":"K7QXM2","startsInMs":3000}"#)
        var entry = RaceStandings.Entry(seat: 2, name: "Bo", gameID: "g2", score: 12, lane: 1, step: 40, state: .timeLimit)
        entry.place = 1
        #expect(text(.standings(code: code, racers: [entry])) == #"{"type":"standings","code":"K7QXM2","racers":[{"seat":2,"#
            + #""name":"Bo","gameId":"g2","score":12,"lane":1,"step":40,"state":"time_limit","place":1}]}"#)
        let outcome = RaceOutcome(code: code, raceID: nil, results: [
            .init(place: 1, seat: 2, name: "Bo", gameID: "g2", score: 40, reason: "crash")])
        #expect(text(.raceOver(outcome)) == #"{"type":"raceOver","code":"K7QXM2","raceId":null,"results":[{"place":1,"#
            + #""seat":2,"name":"Bo","gameId":"g2","score":40,"reason":"crash"}]}"#)
        #expect(text(.queue(QueueView(level: .rapid, waiting: 3, startsInMilliseconds: 7000)))
                == #"{"type":"queue","level":"rapid","waiting":3,"startsInMs":7000}"#)
        var left = QueueView(level: .fast, waiting: 0, startsInMilliseconds: nil)
        left.left = true
        #expect(text(.queue(left)) == #"{"type":"queue","level":"fast","waiting":0,"startsInMs":null,"left":true}"#)
        var elsewhere = ProtocolError(.roomElsewhere, "Elsewhere.", inReplyTo: "joinRoom")
        elsewhere.node = "b"
        #expect(text(.error(elsewhere, quota: nil)) == #"{"type":"error","code":"room_elsewhere","message":"Elsewhere.","inReplyTo":"joinRoom","node":"b"}"#)
    }
}
