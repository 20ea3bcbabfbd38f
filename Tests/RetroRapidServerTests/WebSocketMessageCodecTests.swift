import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import Testing
@testable import RetroRapidServer

/// The JSON a client sends and what it gets back (docs/PROTOCOL.md).
@Suite("WebSocket message codec")
struct WebSocketMessageCodecTests {
    func decode(_ text: String) throws(ProtocolError) -> ClientMessage {
        try ClientMessage.decode(Array(text.utf8))
    }

    func refusal(_ text: String) -> ProtocolError? {
        do {
            _ = try decode(text)
            return nil
        } catch {
            return error
        }
    }

    /// The message as a dictionary, through Foundation's parser: proves the writer's JSON valid.
    func object(_ message: ServerMessage) throws -> [String: Any] {
        let any = try JSONSerialization.jsonObject(with: Data(message.encoded()))
        return try #require(any as? [String: Any])
    }

    // MARK: - Client messages

    @Test func everyClientMessageDecodes() throws {
        #expect(try decode(#"{"type":"hello","token":"abc","client":"Firefox"}"#) == .hello(token: "abc", client: "Firefox"))
        #expect(try decode(#"{"type":"hello","token":"abc"}"#) == .hello(token: "abc", client: nil))
        #expect(try decode(#"{"type":"start","level":"rapid"}"#) == .start(level: .rapid, practice: false))
        #expect(try decode(#"{"type":"start","level":"cruise","practice":true}"#) == .start(level: .cruise, practice: true))
        #expect(try decode(#"{"type":"move","direction":"left","step":12}"#) == .move(direction: .left, seenStep: 12))
        #expect(try decode(#"{"type":"pause"}"#) == .pause)
        #expect(try decode(#"{"type":"resume"}"#) == .resume)
        #expect(try decode(#"{"type":"quit"}"#) == .quit)
        #expect(try decode(#"{"type":"ping"}"#) == .ping)
    }

    @Test func unknownFieldsAreIgnoredForNewerClients() throws {
        #expect(try decode(#"{"type":"pause","reason":"tab hidden","extra":[1,2]}"#) == .pause)
    }

    @Test func fieldsATypeDoesNotUseAreIgnoredWhateverTheyHold() throws {
        #expect(try decode(#"{"type":"ping","step":"x"}"#) == .ping)
        #expect(try decode(#"{"type":"pause","direction":7,"practice":"yes","token":[1]}"#) == .pause)
        #expect(try decode(#"{"type":"hello","token":"abc","step":{},"level":false}"#) == .hello(token: "abc", client: nil))
        #expect(try decode(#"{"type":"start","level":"fast","token":1,"direction":null}"#) == .start(level: .fast, practice: false))
        #expect(try decode(#"{"type":"move","direction":"left","step":3,"practice":"x","client":2}"#) == .move(direction: .left, seenStep: 3))
        // A field the type uses must still hold its kind, and the refusal names it.
        let practice = try #require(refusal(#"{"type":"start","level":"fast","practice":"yes"}"#))
        #expect(practice.code == .badMessage && practice.message.contains("\"practice\"") && practice.inReplyTo == "start")
        #expect(refusal(#"{"type":"hello","token":"abc","client":5}"#)?.message.contains("\"client\"") == true)
        #expect(refusal(#"{"type":1}"#)?.message.contains("\"type\"") == true)
    }

    @Test func malformedJSONIsBadJSON() {
        #expect(refusal("{not json")?.code == .badJSON)
        #expect(refusal("")?.code == .badJSON)
        #expect(refusal(#"{"type":"move""#)?.code == .badJSON)
    }

    @Test func jsonThatIsNotAnObjectIsABadMessage() {
        #expect(refusal("[1,2,3]")?.code == .badMessage)
        #expect(refusal(#""hello""#)?.code == .badMessage)
        #expect(refusal("42")?.code == .badMessage)
    }

    @Test func anUnknownTypeIsNamed() throws {
        let error = try #require(refusal(#"{"type":"teleport"}"#))
        #expect(error.code == .unknownType)
        #expect(error.message.contains("teleport"))
        #expect(refusal(#"{"token":"x"}"#)?.code == .badMessage)  // no type at all
    }

    @Test func missingOrWrongFieldsAreNamed() throws {
        let noStep = try #require(refusal(#"{"type":"move","direction":"left"}"#))
        #expect(noStep.code == .badMessage && noStep.message.contains("step") && noStep.inReplyTo == "move")
        let textStep = try #require(refusal(#"{"type":"move","direction":"left","step":"12"}"#))
        #expect(textStep.code == .badMessage && textStep.message.contains("step"))
        #expect(refusal(#"{"type":"move","direction":"up","step":1}"#)?.code == .badMessage)
        #expect(refusal(#"{"type":"start","level":"easy"}"#)?.message.contains("cruise, fast, rapid") == true)
        #expect(refusal(#"{"type":"start"}"#)?.code == .badMessage)
        #expect(refusal(#"{"type":"hello","token":""}"#)?.code == .badMessage)
        #expect(refusal(#"{"type":"move","direction":"left","step":1e400}"#)?.code != nil)
    }

    // MARK: - Server messages

    @Test func aStepMessageCarriesTheGridLaneScoreIntervalAndCue() throws {
        let road = Road(rows: [.left, .none, [.left, .right], .none, .middle, .none, .right])
        let frame = StepFrame(step: 12, road: road, lane: .middle, score: 7, stepInterval: 540)
        let json = try object(.step(frame, safeLanes: [.left, .middle], haptic: true))
        #expect(json["type"] as? String == "step")
        #expect(json["step"] as? Int == 12)
        #expect(json["grid"] as? [[Int]] == [[1, 0, 0], [0, 0, 0], [1, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 1]])
        #expect(json["lane"] as? Int == 1)
        #expect(json["score"] as? Int == 7)
        #expect(json["interval"] as? Int == 540)
        #expect(json["safeLanes"] as? [Int] == [0, 1])
        #expect(json["haptic"] as? String == "step")
        let crashStep = try object(.step(frame, safeLanes: .none, haptic: false))
        #expect(crashStep["haptic"] == nil && crashStep["safeLanes"] as? [Int] == [])
    }

    @Test func textIsEscaped() throws {
        let error = ProtocolError(.badMessage, "quote \" backslash \\ newline \n tab \t bell \u{7} é 🚗")
        let json = try object(.error(error, quota: nil))
        #expect(json["message"] as? String == error.message)
        #expect(json["code"] as? String == "bad_message")
    }

    @Test func integersOfEverySizeAreWritten() throws {
        for value in [0, 1, -1, 9, 10, 1234567890, Int.max, Int.min] {
            var writer = JSONWriter()
            writer.beginArray()
            writer.int(value)
            writer.endArray()
            let parsed = try JSONSerialization.jsonObject(with: Data(writer.json)) as? [NSNumber]
            #expect(parsed?.first?.int64Value == Int64(value))
        }
    }

    @Test func theHeadroomIsLeftForLibwebsockets() {
        let bytes = ServerMessage.pong.encoded(headroom: 16)
        #expect(bytes.prefix(16).allSatisfy { $0 == 0 })
        #expect(String(decoding: bytes.dropFirst(16), as: UTF8.self) == #"{"type":"pong"}"#)
    }

    @Test func aRefusalForNoPlaysSaysWhenTheyResetAndHowToUnlock() throws {
        let resetsAt = Date(timeIntervalSince1970: 1_768_521_600)  // 2026-01-16T00:00:00Z
        let quota = QuotaStatus(day: "2026-01-15", dailyFreePlays: 5, playsUsed: 5, unlimited: false, resetsAt: resetsAt)
        let json = try object(.error(ProtocolError(.noPlaysLeft, "No free plays left today.", inReplyTo: "start"), quota: quota))
        #expect(json["code"] as? String == "no_plays_left")
        #expect(json["inReplyTo"] as? String == "start")
        #expect(json["resetsAt"] as? String == "2026-01-16T00:00:00Z")
        #expect(json["unlock"] as? String == WebSocketLimits.unlockPath)
        let quotaJSON = try #require(json["quota"] as? [String: Any])
        #expect(quotaJSON["playsLeft"] as? Int == 0 && quotaJSON["dailyFreePlays"] as? Int == 5)
    }

    /// In a cluster a refusal may name the node that holds what was asked for; the client
    /// connects again to `/ws?node=<node>` and asks there. Without one, no `node` is written.
    @Test func aRefusalCanNameTheNodeThatHoldsWhatWasAskedFor() throws {
        let elsewhere = ProtocolError(.init(rawValue: "room_elsewhere"), "Room K7QXM2 is on another server; connect there and join again.",
                                      inReplyTo: "joinRoom", elsewhereOn: "b")
        #expect(elsewhere.node == "b" && elsewhere.close == nil && elsewhere.inReplyTo == "joinRoom")
        let json = try object(.error(elsewhere, quota: nil))
        #expect(json["code"] as? String == "room_elsewhere" && json["node"] as? String == "b")
        #expect(json["inReplyTo"] as? String == "joinRoom" && json["message"] as? String == elsewhere.message)
        #expect(String(decoding: ServerMessage.error(elsewhere, quota: nil).encoded(), as: UTF8.self)
            == #"{"type":"error","code":"room_elsewhere","message":"Room K7QXM2 is on another server; connect there and join again.","inReplyTo":"joinRoom","node":"b"}"#)
        // `replying(to:)` keeps the node; a plain refusal has none on the wire.
        #expect(elsewhere.replying(to: "watch").node == "b")
        #expect(try object(.error(ProtocolError(.noGame, "none", inReplyTo: "move"), quota: nil))["node"] == nil)
    }

    /// `welcome` names the node a connection reached when the server is one of a cluster, and
    /// leaves the field out on a server on SQLite (its bytes as before).
    @Test func welcomeNamesTheNodeOnlyInACluster() throws {
        var welcome = ServerMessage.Welcome(playerID: "P", displayName: "Ada", quota: nil, resumable: nil, limits: WebSocketLimits())
        let single = try object(.welcome(welcome))
        #expect(single["node"] == nil && single.keys.contains("resumable"))
        #expect(!String(decoding: ServerMessage.welcome(welcome).encoded(), as: UTF8.self).contains("node"))
        welcome.node = "b"
        #expect(try object(.welcome(welcome))["node"] as? String == "b")
    }

    /// The quota has one shape on /ws and in GET /api/v1/quota: the same members, `day` and
    /// an integer `playsLeft` included, unlimited or not.
    @Test func theQuotaIsTheSameObjectOverTheSocketAndHTTP() throws {
        let resetsAt = Date(timeIntervalSince1970: 1_768_521_600)  // 2026-01-16T00:00:00Z
        for quota in [QuotaStatus(day: "2026-01-15", dailyFreePlays: 5, playsUsed: 2, unlimited: false, resetsAt: resetsAt),
                      QuotaStatus(day: "2026-01-15", dailyFreePlays: 5, playsUsed: 0, unlimited: true, resetsAt: resetsAt)] {
            let game = ServerMessage.GameSnapshot(gameID: "g", level: .cruise, practice: false, step: 0, road: Road(),
                                                  lane: .middle, score: 0, interval: 800, speedStage: 0, safeLanes: .all, paused: false,
                                                  roadKind: .random)
            let socket = try #require(try object(.started(game, quota: quota))["quota"] as? NSDictionary)
            let http = try APIJSON.response(QuotaJSON(quota))
            #expect(socket == (try JSONSerialization.jsonObject(with: Data(http.body)) as? NSDictionary))
            #expect(socket["day"] as? String == "2026-01-15" && socket["playsLeft"] as? Int == 5 - quota.playsUsed)
            #expect(socket["unlimited"] as? Bool == quota.unlimited && socket["resetsAt"] as? String == "2026-01-16T00:00:00Z")
        }
    }

    @Test func gameOverCarriesTheBestRankAndPlaysLeft() throws {
        let standings = [
            LeaderboardStanding(level: .fast, period: .today, periodKey: "2026-01-15", personalBest: 40, isNewBest: true, rank: 2),
            LeaderboardStanding(level: .fast, period: .thisWeek, periodKey: "2026-W03", personalBest: 40, isNewBest: true, rank: 3),
            LeaderboardStanding(level: .fast, period: .allTime, periodKey: "all", personalBest: 55, isNewBest: false, rank: 9),
        ]
        let quota = QuotaStatus(day: "2026-01-15", dailyFreePlays: 5, playsUsed: 2, unlimited: false,
                                resetsAt: Date(timeIntervalSince1970: 1_768_521_600))
        let json = try object(.gameOver(.init(gameID: "abc", reason: .crash, score: 40, steps: 61, practice: false,
                                              saved: true, standings: standings, quota: quota)))
        #expect(json["score"] as? Int == 40 && json["steps"] as? Int == 61 && json["reason"] as? String == "crash")
        #expect(json["personalBest"] as? Int == 55 && json["rank"] as? Int == 9 && json["newBest"] as? Bool == false)
        let today = try #require((json["standings"] as? [String: Any])?["today"] as? [String: Any])
        #expect(today["rank"] as? Int == 2 && today["newBest"] as? Bool == true && today["period"] as? String == "2026-01-15")
        #expect((json["quota"] as? [String: Any])?["playsLeft"] as? Int == 3)
    }

    @Test func everyServerMessageIsValidJSONWithItsType() throws {
        let snapshot = ServerMessage.GameSnapshot(gameID: "g", level: .cruise, practice: true, step: 3, road: Road(),
                                                  lane: .left, score: 1, interval: 800, speedStage: 0,
                                                  safeLanes: .all, paused: true, roadKind: .random)
        let frame = StepFrame(step: 1, road: Road(), lane: .middle, score: 0, stepInterval: 600)
        let messages: [ServerMessage] = [
            .welcome(.init(playerID: "P", displayName: "Racer \"1\"", quota: nil, resumable: snapshot, limits: WebSocketLimits())),
            .started(snapshot, quota: nil), .snapshot(snapshot), .step(frame, safeLanes: .all, haptic: true),
            .moved(lane: .left, safe: false, haptic: false), .bump(.right), .stepRevised(step: 4),
            .speedUpSoon(atScore: 100), .speedUp(interval: 540, stage: 1), .crash(kind: .side, lane: .right, step: 9, score: 4),
            .gameOver(.init(gameID: "g", reason: .shutdown, score: 0, steps: 0, practice: false, saved: false, standings: [], quota: nil)),
            .paused(reason: .player), .resumed(nextStepInMilliseconds: 600), .detached(gameID: "g"),
            .settings(document: Array(#"{"settings":{},"updatedAt":null,"version":0}"#.utf8)), .pong,
            .error(ProtocolError(.noGame, "none"), quota: nil),
        ]
        for message in messages {
            let json = try object(message)
            #expect(json["type"] as? String == "\(message.type)")
        }
    }
}
