import Foundation
import RetroRapidRules
import RetroRapidDomain
import Testing
@testable import RetroRapidServer

/// The daily road on the wire (docs/PROTOCOL.md, "The daily road"): `start`'s `road`, the
/// road and day in a game's picture, `gameOver.daily`, and the `daily_played` refusal.
@Suite("Daily road messages")
struct DailyRoadMessagesTests {
    func object(_ message: ServerMessage) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(message.encoded())) as? [String: Any])
    }

    @Test func startReadsTheRoadAndRefusesAnyOther() throws {
        func decode(_ text: String) throws(ProtocolError) -> ClientMessage { try ClientMessage.decode(Array(text.utf8)) }
        #expect(try decode(#"{"type":"start","level":"rapid","road":"daily"}"#) == .start(level: .rapid, practice: false, road: .daily))
        #expect(try decode(#"{"type":"start","level":"rapid","road":"daily","practice":true}"#) == .start(level: .rapid, practice: true, road: .daily))
        #expect(try decode(#"{"type":"start","level":"rapid","road":"random"}"#) == .start(level: .rapid, practice: false, road: .random))
        #expect(try decode(#"{"type":"start","level":"rapid","road":null}"#) == .start(level: .rapid, practice: false, road: .random))
        // Other types ignore it, whatever it holds.
        #expect(try decode(#"{"type":"pause","road":7}"#) == .pause)
        for (text, words) in [(#"{"type":"start","level":"rapid","road":"weekly"}"#, #""weekly" is not a road; use "random" or "daily"."#),
                              (#"{"type":"start","level":"rapid","road":3}"#, #"start needs a string in "road"."#)] {
            do {
                _ = try decode(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == .badMessage && error.inReplyTo == "start" && error.message == words, "\(error)")
            }
        }
    }

    @Test func aGamesPictureSaysItsRoadAndDay() throws {
        var snapshot = ServerMessage.GameSnapshot(gameID: "g", level: .rapid, practice: false, step: 0, road: Road(), lane: .middle,
                                                  score: 0, interval: 420, speedStage: 0, safeLanes: .all, paused: false, roadKind: .random)
        let random = try #require(try object(.started(snapshot, quota: nil))["game"] as? [String: Any])
        #expect(random["road"] as? String == "random" && random["day"] == nil)
        snapshot.roadKind = .daily(UTCDay("2026-12-01")!)
        let daily = try #require(try object(.snapshot(snapshot))["game"] as? [String: Any])
        #expect(daily["road"] as? String == "daily" && daily["day"] as? String == "2026-12-01")
    }

    @Test func gameOverCarriesTheDailyPlaceOrNull() throws {
        var result = ServerMessage.GameResult(gameID: "g", reason: .crash, score: 42, steps: 57, practice: false, saved: true,
                                              standings: [], quota: nil)
        #expect(try object(.gameOver(result))["daily"] is NSNull)
        result.daily = DailyStanding(day: UTCDay("2026-12-01")!, best: 42, rank: 3)
        let daily = try #require(try object(.gameOver(result))["daily"] as? [String: Any])
        #expect(daily["day"] as? String == "2026-12-01" && daily["best"] as? Int == 42 && daily["rank"] as? Int == 3)
    }

    @Test func aSecondAttemptIsRefusedWithWhenTheNextRoadComes() throws {
        let played = DailyRoadPlayedError(level: .rapid, day: UTCDay("2026-12-01")!, gameID: "g")
        var error = ProtocolError(.dailyPlayed, played.storeError.message, inReplyTo: "start")
        error.resetsAt = played.resetsAt
        let json = try object(.error(error, quota: nil))
        #expect(json["code"] as? String == "daily_played" && json["inReplyTo"] as? String == "start")
        #expect(json["resetsAt"] as? String == "2026-12-02T00:00:00Z")
        #expect((json["message"] as? String)?.contains("Practice on it is free") == true)
    }
}
