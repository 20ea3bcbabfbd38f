import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import Synchronization
import Testing
@testable import RetroRapidServer

@Suite("Settings over HTTP")
struct SettingsAPITests {
    @Test func aNewPlayerReadsTheDefaultsAtVersionZero() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let response = try server.request("GET", "/api/v1/settings", token: ada.token)
        #expect(response.status == 200)
        #expect(response[header: "etag"] == #""0""#)
        #expect(response.json?["version"] as? Int == 0)
        #expect((response.json?["settings"] as? [String: Any])?["speedLevel"] as? String == "cruise")
    }

    /// A stored document this build cannot read (written around the API, out of range) is
    /// `StoreError(.unreadable)`: a failure of the store, answered 500 like any other, never
    /// passed off as the player's mistake.
    @Test func anUnreadableStoredDocumentIsAServerFailureNotARefusal() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let db = try server.database()
        try db.prepare("INSERT INTO player_settings (player_id, version, document, updated_at) VALUES (?, 1, ?, '2026-01-15T10:00:00Z')")
            .execute([try server.playerRowID(publicID: ada.id), #"{"cueVolume":999}"#])
        let response = try server.request("GET", "/api/v1/settings", token: ada.token)
        #expect(response.status == 500)
        #expect((response.json?["error"] as? [String: Any])?["code"] as? String == "internal", "\(response.text)")
        #expect(!response.text.contains("999"), "the stored value stays in the log, not the answer: \(response.text)")
    }

    @Test func aWriteBasedOnTheCurrentVersionIsStoredAndAStaleOneIsRefusedWithTheCurrentDocument() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")

        let written = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"cueVolume":40,"theme":"dark"}"#,
                                         headers: ["If-Match": #""0""#])
        #expect(written.status == 200)
        #expect(written[header: "etag"] == #""1""#)
        #expect(written.json?["version"] as? Int == 1)

        // A second device still holding version 0 writes: refused, and told what is stored.
        let stale = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"cueVolume":90}"#,
                                       headers: ["If-Match": #""0""#])
        #expect(stale.status == 412)
        #expect(stale.errorCode == "stale")
        #expect(stale[header: "etag"] == #""1""#)
        let current = try #require(stale.json?["current"] as? [String: Any])
        #expect(current["version"] as? Int == 1)
        #expect((current["settings"] as? [String: Any])?["cueVolume"] as? Int == 40)

        // Nothing was lost or changed.
        let read = try server.request("GET", "/api/v1/settings", token: ada.token)
        #expect(read.json?["version"] as? Int == 1)
        let settings = try #require(read.json?["settings"] as? [String: Any])
        #expect(settings["cueVolume"] as? Int == 40)
        #expect(settings["theme"] as? String == "dark")
    }

    @Test func aWeakETagNeverMatchesAndChangesNothing() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        _ = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"cueVolume":40}"#, headers: ["If-Match": #""0""#])
        // RFC 9110 §13.1.1: If-Match compares strongly, so W/"1" does not match version 1.
        for method in ["PUT", "PATCH"] {
            let weak = try server.request(method, "/api/v1/settings", token: ada.token, json: #"{"cueVolume":90}"#,
                                          headers: ["If-Match": #"W/"1""#])
            #expect(weak.status == 412, "\(method)")
            #expect(weak.errorCode == "stale")
            #expect(weak[header: "etag"] == #""1""#)
            let message = try #require((weak.json?["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("weak") && message.contains("W/"))
            let current = try #require(weak.json?["current"] as? [String: Any])
            #expect(current["version"] as? Int == 1)
            #expect((current["settings"] as? [String: Any])?["cueVolume"] as? Int == 40)
        }
        let read = try server.request("GET", "/api/v1/settings", token: ada.token)
        #expect(read.json?["version"] as? Int == 1)
        #expect((read.json?["settings"] as? [String: Any])?["cueVolume"] as? Int == 40)
    }

    @Test func aPatchChangesOnlyTheFieldsItSends() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        _ = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"theme":"dark"}"#, headers: ["If-Match": "\"0\""])
        let patched = try server.request("PATCH", "/api/v1/settings", token: ada.token, json: #"{"haptics":{"step":false}}"#,
                                         headers: ["If-Match": "\"1\""])
        #expect(patched.status == 200)
        let settings = try #require(patched.json?["settings"] as? [String: Any])
        #expect(settings["theme"] as? String == "dark")
        #expect((settings["haptics"] as? [String: Any])?["step"] as? Bool == false)
        #expect((settings["haptics"] as? [String: Any])?["crash"] as? Bool == true)
    }

    @Test func writesWithoutAVersionOrWithBadFieldsChangeNothing() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let noVersion = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"cueVolume":40}"#)
        #expect(noVersion.status == 428)
        #expect(noVersion.errorCode == "precondition_required")

        let cases: [(String, Int, String)] = [
            (#"{"cueVolume":400}"#, 400, "invalid"),
            (#"{"cueVolum":40}"#, 400, "unknown_field"),
            (#"{"theme":"purple"}"#, 400, "invalid"),
            (#"{"cueVolume":"#, 400, "malformed_json"),
            (#"[1,2]"#, 400, "malformed_json"),
        ]
        for (body, status, code) in cases {
            let response = try server.request("PUT", "/api/v1/settings", token: ada.token, json: body, headers: ["If-Match": "\"0\""])
            #expect(response.status == status, "\(body)")
            #expect(response.errorCode == code, "\(body)")
        }
        let wrongType = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"cueVolume":40}"#,
                                           headers: ["If-Match": "\"0\"", "Content-Type": "text/plain"])
        #expect(wrongType.status == 415)
        #expect(try server.count("player_settings") == 0)
    }

    @Test func aStoredWriteIsAnnouncedForThePlayersOtherDevices() throws {
        let server = try RunningGameServer()
        let announced = Mutex<[(Int64, Int, Bool)]>([])
        let http = server.server.http
        server.server.events.subscribeToSettingsChanges { playerID, _, settings in
            announced.withLock { $0.append((playerID, settings.version, http.isServiceThread)) }
        }
        let ada = try server.createPlayer("Ada")
        _ = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"mono":true}"#, headers: ["If-Match": "\"0\""])
        // A stale write is not announced.
        _ = try server.request("PUT", "/api/v1/settings", token: ada.token, json: #"{"mono":false}"#, headers: ["If-Match": "\"0\""])
        let seen = announced.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.0 == (try server.playerRowID(publicID: ada.id)))
        #expect(seen.first?.1 == 1)
        #expect(seen.first?.2 == true)
    }
}
