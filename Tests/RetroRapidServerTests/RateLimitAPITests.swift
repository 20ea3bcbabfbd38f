import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Testing
@testable import RetroRapidServer

/// Guessing bounded over real HTTP: promo codes, link codes and device tokens, per player and
/// per address, with the limits' clocks (memory and storage) moved by the test instead of
/// waited for.
@Suite("Rate limits over HTTP")
struct RateLimitAPITests {
    typealias TestClock = RateLimitsTests.TestClock

    static func server(_ clock: TestClock, _ configure: (inout APILimits) -> Void) throws -> RunningGameServer {
        try RunningGameServer { options in
            configure(&options.limits)
            // Both clocks: the memory's first filter and the database's counts.
            options.rateLimitClock = { clock.now }
            options.clock = { clock.date }
        }
    }

    static func redeem(_ server: RunningGameServer, _ token: String, _ code: String) throws -> TestHTTPResponse {
        try server.request("POST", "/api/v1/codes/redeem", token: token, json: #"{"code":"\#(code)"}"#)
    }

    static func refusals(_ server: RunningGameServer, _ action: String, _ scope: String) throws -> Int? {
        let text = String(decoding: try server.request("GET", "/metrics").body, as: UTF8.self)
        let prefix = #"retrorapid_rate_limited_total{action="\#(action)",scope="\#(scope)"} "#
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    @Test func wrongCodesAreLimitedPerPlayerAndAValidCodeCostsNothing() throws {
        let clock = TestClock()
        let server = try Self.server(clock) { $0.codeFailuresPerPlayer = RateLimit(3, per: .seconds(60)) }
        try CommerceAPITests.createLaunchOffer(server)
        let ada = try server.createPlayer("Ada")
        // Honest use: one valid code, redeemed again and again, never costs a try.
        for _ in 0..<10 { #expect(try Self.redeem(server, ada.token, "ARCTICCONF").status == 200) }

        let mallory = try server.createPlayer("Mallory")
        for guess in ["AAAA1111", "BBBB2222", "CCCC3333"] {
            #expect(try Self.redeem(server, mallory.token, guess).status == 404)
        }
        let refused = try Self.redeem(server, mallory.token, "ARCTICCONF")
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rate_limited")
        #expect(refused[header: "retry-after"] == "60")
        #expect(refused.errorMessage?.contains("at most 3 in any minute") == true)
        #expect(try server.count("code_redemptions") == 1)  // the guess that would have hit was not tried
        #expect(try Self.refusals(server, "code_redeem", "player") == 1)

        // Ada, at the same address, is not held up by Mallory's guesses.
        #expect(try Self.redeem(server, ada.token, "ARCTICCONF").status == 200)
        clock.advance(.seconds(59))
        #expect(try Self.redeem(server, mallory.token, "ARCTICCONF")[header: "retry-after"] == "1")
        clock.advance(.seconds(1))
        #expect(try Self.redeem(server, mallory.token, "ARCTICCONF").status == 200)
    }

    @Test func wrongCodesAreLimitedPerAddressAcrossPlayers() throws {
        let clock = TestClock()
        let server = try Self.server(clock) { $0.codeFailuresPerAddress = RateLimit(4, per: .seconds(600)) }
        for index in 0..<4 {
            let player = try server.createPlayer()
            #expect(try Self.redeem(server, player.token, "WRONG\(index)XYZ").status == 404)
        }
        let fresh = try server.createPlayer()
        let refused = try Self.redeem(server, fresh.token, "WRONG9XYZ")
        #expect(refused.status == 429)
        #expect(refused.errorMessage?.contains("from your address") == true)
        #expect(try Self.refusals(server, "code_redeem", "address") == 1)
        #expect(try Self.refusals(server, "code_redeem", "player") == 0)
        // A request without a token is still told to sign in first.
        #expect(try server.request("POST", "/api/v1/codes/redeem", json: #"{"code":"X"}"#).status == 401)
    }

    @Test func unknownTokensAreLimitedPerAddressAndThenNoTokenIsLookedUp() throws {
        let clock = TestClock()
        let server = try Self.server(clock) { $0.signInFailures = RateLimit(3, per: .seconds(120)) }
        let ada = try server.createPlayer("Ada")
        for _ in 0..<20 { #expect(try server.request("GET", "/api/v1/me", token: ada.token).status == 200) }
        let guess = String(repeating: "A", count: DeviceToken.textLength)
        for token in [guess, "short", guess] {
            #expect(try server.request("GET", "/api/v1/me", token: token).status == 401)
        }
        for token in [guess, ada.token] {
            let refused = try server.request("GET", "/api/v1/quota", token: token)
            #expect(refused.status == 429)
            #expect(refused[header: "retry-after"] == "120")
            #expect(refused.errorMessage?.contains("signed nobody in") == true)
        }
        #expect(try Self.refusals(server, "sign_in", "address") == 2)
        clock.advance(.seconds(120))
        #expect(try server.request("GET", "/api/v1/me", token: ada.token).status == 200)
    }

    @Test func onlyLinkCodeClaimsThatFailCount() throws {
        let clock = TestClock()
        let server = try Self.server(clock) { $0.linkCodeClaimFailures = RateLimit(2, per: .seconds(600)) }
        let ada = try server.createPlayer("Ada")
        // Three devices joined (the creation limit is 5 codes per 10 minutes): none counted.
        for _ in 0..<3 {
            let code = try #require(try server.request("POST", "/api/v1/link-codes", token: ada.token).json?["code"] as? String)
            #expect(try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"\#(code)"}"#).status == 201)
        }
        // A bad device label is not a guess either.
        let code = try #require(try server.request("POST", "/api/v1/link-codes", token: ada.token).json?["code"] as? String)
        let badLabel = String(repeating: "x", count: 500)
        #expect(try server.request("POST", "/api/v1/link-codes/claim",
                                   json: #"{"code":"\#(code)","deviceLabel":"\#(badLabel)"}"#).status == 400)
        #expect(try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"ZZZZ-ZZZZ"}"#).status == 404)
        #expect(try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"ZZZZ"}"#).status == 400)
        let refused = try server.request("POST", "/api/v1/link-codes/claim", json: #"{"code":"\#(code)"}"#)
        #expect(refused.status == 429)
        #expect(refused[header: "retry-after"] == "600")
        #expect(try Self.refusals(server, "link_code_claim", "address") == 1)
    }

    @Test func newPlayersAreExactlyTheCountInAnyWindow() throws {
        let clock = TestClock()
        let server = try Self.server(clock) { $0.playerCreation = RateLimit(3, per: .seconds(600)) }
        for _ in 0..<3 { _ = try server.createPlayer() }
        #expect(try server.request("POST", "/api/v1/players").status == 429)
        // A bucket would have refilled one by now; the window has not passed.
        clock.advance(.seconds(599))
        #expect(try server.request("POST", "/api/v1/players")[header: "retry-after"] == "1")
        clock.advance(.seconds(1))
        for _ in 0..<3 { _ = try server.createPlayer() }
        #expect(try server.request("POST", "/api/v1/players").status == 429)
        #expect(try server.count("players") == 6)
        #expect(try Self.refusals(server, "player_create", "address") == 3)
    }
}
