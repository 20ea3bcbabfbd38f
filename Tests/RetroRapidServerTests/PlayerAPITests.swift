import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Testing
@testable import RetroRapidServer
import RetroRapidSQL

@Suite("Players, devices and link codes over HTTP")
struct PlayerAPITests {
    @Test func creatingAPlayerReturnsTheirTokenOnceAndSignsThemIn() throws {
        let server = try RunningGameServer()
        let response = try server.request("POST", "/api/v1/players", json: #"{"displayName":"Ada","deviceLabel":"Firefox"}"#)
        #expect(response.status == 201)
        #expect(response[header: "cache-control"] == "no-store")
        let object = try #require(response.json)
        let token = try #require(object["token"] as? String)
        #expect(token.count == 43)
        let player = try #require(object["player"] as? [String: Any])
        #expect(player["displayName"] as? String == "Ada")

        let me = try server.request("GET", "/api/v1/me", token: token)
        #expect(me.status == 200)
        let mePlayer = try #require(me.json?["player"] as? [String: Any])
        #expect(mePlayer["id"] as? String == player["id"] as? String)
        #expect((me.json?["entitlements"] as? [String: Any])?["unlimited"] as? Bool == false)
        // The token is never shown again.
        #expect(!me.text.contains(token))
    }

    @Test func anEmptyBodyCreatesAPlayerWithADefaultName() throws {
        let server = try RunningGameServer()
        let response = try server.request("POST", "/api/v1/players")
        #expect(response.status == 201)
        let name = (response.json?["player"] as? [String: Any])?["displayName"] as? String
        #expect(name?.hasPrefix("Racer ") == true)
    }

    @Test(arguments: [
        ([String: String](), "no token"),
        (["Authorization": "Bearer not-a-token"], "malformed token"),
        (["Authorization": "Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"], "unknown token"),
        (["Authorization": "Basic dXNlcjpwYXNz"], "another scheme"),
    ])
    func requestsWithoutAValidTokenAre401(headers: [String: String], label: String) throws {
        let server = try RunningGameServer()
        for path in ["/api/v1/me", "/api/v1/quota", "/api/v1/devices", "/api/v1/settings"] {
            let response = try server.request("GET", path, headers: headers)
            #expect(response.status == 401, "\(label) \(path)")
            #expect(response.errorCode == "unauthorized", "\(label) \(path)")
            #expect(response[header: "www-authenticate"]?.hasPrefix("Bearer") == true, "\(label) \(path)")
        }
    }

    @Test func theDisplayNameCanBeChangedAndIsValidated() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let renamed = try server.request("PATCH", "/api/v1/me", token: ada.token, json: #"{"displayName":"Grace"}"#)
        #expect(renamed.status == 200)
        #expect((renamed.json?["player"] as? [String: Any])?["displayName"] as? String == "Grace")

        let refused = try server.request("PATCH", "/api/v1/me", token: ada.token, json: #"{"displayName":"\u202Eevil"}"#)
        #expect(refused.status == 400)
        #expect(refused.errorCode == "invalid")
        #expect((refused.json?["error"] as? [String: Any])?["field"] as? String == "displayName")
        let me = try server.request("GET", "/api/v1/me", token: ada.token)
        #expect((me.json?["player"] as? [String: Any])?["displayName"] as? String == "Grace")
    }

    @Test func aSecondDeviceJoinsThroughALinkCodeAndARevokedDeviceIsSignedOut() throws {
        let server = try RunningGameServer()
        let phone = try server.createPlayer("Ada", device: "phone")

        let issued = try server.request("POST", "/api/v1/link-codes", token: phone.token)
        #expect(issued.status == 201)
        let code = try #require(issued.json?["code"] as? String)
        #expect(issued.json?["expiresAt"] is String)

        // The laptop types the code in lower case without the dash: it still works.
        let typed = code.replacingOccurrences(of: "-", with: "").lowercased()
        let claimed = try server.request("POST", "/api/v1/link-codes/claim",
                                         json: RunningGameServer.json(["code": typed, "deviceLabel": "laptop"]))
        #expect(claimed.status == 201)
        let laptopToken = try #require(claimed.json?["token"] as? String)
        #expect((claimed.json?["player"] as? [String: Any])?["id"] as? String == phone.id)

        // A code works once.
        let again = try server.request("POST", "/api/v1/link-codes/claim", json: RunningGameServer.json(["code": code]))
        #expect(again.status == 410)
        #expect(again.errorCode == "expired")

        let devices = try server.request("GET", "/api/v1/devices", token: laptopToken)
        #expect(devices.status == 200)
        let list = try #require(devices.json?["devices"] as? [[String: Any]])
        #expect(list.map { $0["label"] as? String } == ["phone", "laptop"])
        #expect(list.map { $0["current"] as? Bool } == [false, true])

        // The laptop signs the phone out; the phone's token stops working at once.
        let phoneID = try #require(list[0]["id"] as? Int)
        let revoked = try server.request("DELETE", "/api/v1/devices/\(phoneID)", token: laptopToken)
        #expect(revoked.status == 200)
        let after = try #require(revoked.json?["devices"] as? [[String: Any]])
        #expect(after[0]["revokedAt"] is String)
        let signedOut = try server.request("GET", "/api/v1/me", token: phone.token)
        #expect(signedOut.status == 401)

        // The last device is kept: without it nobody could sign in as this player again.
        let laptopID = try #require(list[1]["id"] as? Int)
        let last = try server.request("DELETE", "/api/v1/devices/\(laptopID)", token: laptopToken)
        #expect(last.status == 409)
        #expect(try server.request("GET", "/api/v1/me", token: laptopToken).status == 200)
    }

    @Test func unknownAndMalformedLinkCodesAreRefused() throws {
        let server = try RunningGameServer()
        let unknown = try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"ZZZZ-ZZZZ"}"#)
        #expect(unknown.status == 404)
        let malformed = try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"U"}"#)
        #expect(malformed.status == 400)
        #expect(try server.count("devices") == 0)
    }

    @Test func anotherPlayersDeviceCannotBeRevoked() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let grace = try server.createPlayer("Grace")
        let graceDevices = try server.request("GET", "/api/v1/devices", token: grace.token)
        let graceDevice = try #require((graceDevices.json?["devices"] as? [[String: Any]])?.first?["id"] as? Int)
        let response = try server.request("DELETE", "/api/v1/devices/\(graceDevice)", token: ada.token)
        #expect(response.status == 404)
        #expect(try server.request("GET", "/api/v1/me", token: grace.token).status == 200)
    }

    @Test func linkCodeCreationIsLimitedWithRetryAfter() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        for _ in 0..<5 {
            #expect(try server.request("POST", "/api/v1/link-codes", token: ada.token).status == 201)
        }
        let refused = try server.request("POST", "/api/v1/link-codes", token: ada.token)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rate_limited")
        let retryAfter = try #require(refused[header: "retry-after"].flatMap { Int($0) })
        #expect((1...600).contains(retryAfter))
    }

    @Test func playerCreationAndCodeClaimsAreRateLimitedPerAddress() throws {
        let server = try RunningGameServer { options in
            options.limits.playerCreation = RateLimit(3, per: .seconds(60))
            options.limits.linkCodeClaimFailures = RateLimit(2, per: .seconds(60))
        }
        for _ in 0..<3 { _ = try server.createPlayer() }
        let refused = try server.request("POST", "/api/v1/players")
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rate_limited")
        #expect(refused[header: "retry-after"].flatMap { Int($0) }.map { $0 >= 1 && $0 <= 60 } == true)
        #expect(try server.count("players") == 3)

        for _ in 0..<2 {
            #expect(try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"ZZZZ-ZZZZ"}"#).status == 404)
        }
        let guessing = try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"ZZZZ-ZZZY"}"#)
        #expect(guessing.status == 429)
        #expect(guessing[header: "retry-after"] != nil)
    }

    @Test func behindATrustedProxyEachForwardedClientHasItsOwnLimit() throws {
        let server = try RunningGameServer { options in
            options.limits.playerCreation = RateLimit(1, per: .seconds(60))
            options.limits.trustedProxies = ["127.0.0.1"]
        }
        let first = try server.request("POST", "/api/v1/players", headers: ["X-Forwarded-For": "203.0.113.7"])
        #expect(first.status == 201)
        let again = try server.request("POST", "/api/v1/players", headers: ["X-Forwarded-For": "198.51.100.1, 203.0.113.7"])
        #expect(again.status == 429)
        let other = try server.request("POST", "/api/v1/players", headers: ["X-Forwarded-For": "203.0.113.8"])
        #expect(other.status == 201)
    }

    @Test func fromAnUntrustedPeerTheForwardedHeaderIsIgnored() throws {
        let server = try RunningGameServer { options in
            options.limits.playerCreation = RateLimit(1, per: .seconds(60))
        }
        #expect(try server.request("POST", "/api/v1/players", headers: ["X-Forwarded-For": "203.0.113.7"]).status == 201)
        #expect(try server.request("POST", "/api/v1/players", headers: ["X-Forwarded-For": "203.0.113.8"]).status == 429)
    }

    @Test func quotaShowsPlaysLeftAndWhenTheyReset() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let fresh = try server.request("GET", "/api/v1/quota", token: ada.token)
        #expect(fresh.status == 200)
        #expect(fresh.json?["playsLeft"] as? Int == 5)
        #expect(fresh.json?["unlimited"] as? Bool == false)
        let resetsAt = try #require(fresh.json?["resetsAt"] as? String)
        #expect(resetsAt.hasSuffix("T00:00:00Z"))

        // Two plays consumed as the game side would, on another connection to the file.
        let quota = SQLQuotaRepository(executor: SQLiteExecutor(database: try server.database()))
        let playerID = try server.playerRowID(publicID: ada.id)
        for _ in 0..<2 { try quota.consumePlay(playerID: playerID, now: Date()) }
        let after = try server.request("GET", "/api/v1/quota", token: ada.token)
        #expect(after.json?["playsUsed"] as? Int == 2)
        #expect(after.json?["playsLeft"] as? Int == 3)
    }
}
