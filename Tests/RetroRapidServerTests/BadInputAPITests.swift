import Foundation
import Testing
@testable import RetroRapidServer

/// docs/API.md: bad input gets a clear error with the right status, and changes nothing.
@Suite("Bad input to the API")
struct BadInputAPITests {
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let method: String
        let path: String
        let body: String?
        let headers: [String: String]
        let status: Int
        let code: String
    }

    static let cases: [Case] = [
        Case(description: "malformed JSON", method: "POST", path: "/api/v1/players", body: #"{"displayName":"#,
             headers: [:], status: 400, code: "malformed_json"),
        Case(description: "not an object", method: "POST", path: "/api/v1/players", body: #""Ada""#,
             headers: [:], status: 400, code: "malformed_json"),
        Case(description: "unknown field", method: "POST", path: "/api/v1/players", body: #"{"displayname":"Ada"}"#,
             headers: [:], status: 400, code: "unknown_field"),
        Case(description: "wrong type", method: "POST", path: "/api/v1/players", body: #"{"displayName":42}"#,
             headers: [:], status: 400, code: "invalid"),
        Case(description: "invalid name", method: "POST", path: "/api/v1/players", body: #"{"displayName":"  "}"#,
             headers: [:], status: 400, code: "invalid"),
        Case(description: "wrong content type", method: "POST", path: "/api/v1/players", body: #"{"displayName":"Ada"}"#,
             headers: ["Content-Type": "text/plain"], status: 415, code: "unsupported_media_type"),
        Case(description: "form content type", method: "POST", path: "/api/v1/players", body: "displayName=Ada",
             headers: ["Content-Type": "application/x-www-form-urlencoded"], status: 415, code: "unsupported_media_type"),
        Case(description: "unknown route", method: "POST", path: "/api/v1/player", body: #"{}"#,
             headers: [:], status: 404, code: "not_found"),
        Case(description: "unknown version", method: "GET", path: "/api/v2/players", body: nil,
             headers: [:], status: 404, code: "not_found"),
        Case(description: "wrong method", method: "PUT", path: "/api/v1/players", body: #"{}"#,
             headers: [:], status: 405, code: "method_not_allowed"),
        Case(description: "wrong method with a parameter", method: "GET", path: "/api/v1/devices/1", body: nil,
             headers: [:], status: 405, code: "method_not_allowed"),
        Case(description: "missing required body", method: "POST", path: "/api/v1/link-codes/claim", body: nil,
             headers: [:], status: 400, code: "malformed_json"),
        Case(description: "missing required field", method: "POST", path: "/api/v1/link-codes/claim", body: #"{"deviceLabel":"x"}"#,
             headers: [:], status: 400, code: "invalid"),
        Case(description: "unknown leaderboard level", method: "GET", path: "/api/v1/leaderboards/easy/today", body: nil,
             headers: [:], status: 404, code: "not_found"),
        Case(description: "page size out of range", method: "GET", path: "/api/v1/leaderboards/fast/today?limit=0", body: nil,
             headers: [:], status: 400, code: "invalid"),
        Case(description: "a cursor this server never gave", method: "GET", path: "/api/v1/leaderboards/fast/today?cursor=abc", body: nil,
             headers: [:], status: 400, code: "invalid"),
    ]

    @Test(arguments: cases)
    func eachBadRequestGetsItsStatusAndCodeAndChangesNothing(_ bad: Case) throws {
        let server = try RunningGameServer()
        _ = try server.createPlayer("Ada")
        let players = try server.count("players")
        let devices = try server.count("devices")

        let response = try server.request(bad.method, bad.path, json: bad.body, headers: bad.headers)

        #expect(response.status == bad.status)
        #expect(response[header: "content-type"] == "application/json")
        #expect(response.errorCode == bad.code)
        #expect(response.errorMessage?.isEmpty == false)
        #expect(try server.count("players") == players)
        #expect(try server.count("devices") == devices)
    }

    @Test func aBodyOverTheLimitIs413AndChangesNothing() throws {
        let server = try RunningGameServer()
        let name = String(repeating: "a", count: HTTPRequest.maximumBodySize)
        let response = try server.request("POST", "/api/v1/players", json: #"{"displayName":"\#(name)"}"#)
        #expect(response.status == 413)
        #expect(response.errorCode == "payload_too_large")
        #expect(try server.count("players") == 0)
    }

    @Test func aWrongMethodNamesTheAllowedOnes() throws {
        let server = try RunningGameServer()
        let response = try server.request("DELETE", "/api/v1/settings")
        #expect(response.status == 405)
        #expect(response[header: "allow"] == "GET, HEAD, PATCH, PUT")
    }

    @Test func aWriteWithAnUnknownTokenChangesNothing() throws {
        let server = try RunningGameServer()
        let response = try server.request("PATCH", "/api/v1/me", token: String(repeating: "A", count: 43),
                                          json: #"{"displayName":"Mallory"}"#)
        #expect(response.status == 401)
        #expect(try server.count("players") == 0)
    }
}
