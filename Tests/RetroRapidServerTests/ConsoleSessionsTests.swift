import Foundation
import RetroRapidDomain
import Synchronization
import Testing
@testable import RetroRapidServer

/// The console's sessions on a clock the test moves: idle and lifetime limits, sign-out, a
/// disabled operator's sessions, and what the session cookie and a change's Origin are read as.
@Suite struct ConsoleSessionsTests {
    final class TestClock: Sendable {
        let now = Mutex(ContinuousClock.now)
        func advance(_ duration: Duration) { now.withLock { $0 += duration } }
        var read: @Sendable () -> ContinuousClock.Instant { { self.now.withLock { $0 } } }
    }

    @Test func aSessionLastsWhileUsedAndEndsWhenIdleTooLong() {
        let clock = TestClock()
        let sessions = ConsoleSessions(clock: clock.read)
        let (token, opened) = sessions.open(operatorName: "ada", role: .admin)
        #expect(token.utf8.count == 43 && opened.csrfToken.utf8.count == 43 && opened.csrfToken != token)
        clock.advance(ConsoleSessions.idleLimit - .seconds(1))
        #expect(sessions.use(token)?.operatorName == "ada")  // used: the idle clock starts again
        clock.advance(ConsoleSessions.idleLimit - .seconds(1))
        #expect(sessions.use(token) != nil)
        clock.advance(ConsoleSessions.idleLimit)
        #expect(sessions.use(token) == nil)
        #expect(sessions.count == 0)
    }

    @Test func aSessionEndsAtItsLifetimeHoweverBusy() {
        let clock = TestClock()
        let sessions = ConsoleSessions(clock: clock.read)
        let (token, _) = sessions.open(operatorName: "ada", role: .viewer)
        var used = Duration.zero
        while used + .seconds(600) < ConsoleSessions.lifetimeLimit {
            clock.advance(.seconds(600))
            used += .seconds(600)
            #expect(sessions.use(token) != nil)
        }
        clock.advance(ConsoleSessions.lifetimeLimit - used)
        #expect(sessions.use(token) == nil)
    }

    @Test func signOutAndADisabledAccountEndSessions() {
        let sessions = ConsoleSessions()
        let (first, _) = sessions.open(operatorName: "ada", role: .admin)
        let (second, _) = sessions.open(operatorName: "ada", role: .admin)
        let (other, _) = sessions.open(operatorName: "bob", role: .viewer)
        sessions.end(first)
        #expect(sessions.use(first) == nil && sessions.use(second) != nil)
        sessions.endAll(of: "ada")
        #expect(sessions.use(second) == nil && sessions.use(other)?.role == .viewer)
        #expect(sessions.use("not a token") == nil && sessions.use("") == nil)
    }

    @Test func theOldestSessionGoesWhenTheTableIsFull() {
        let clock = TestClock()
        let sessions = ConsoleSessions(clock: clock.read)
        let (oldest, _) = sessions.open(operatorName: "ada", role: .admin)
        for _ in 1..<ConsoleSessions.maximumCount {
            clock.advance(.milliseconds(1))
            _ = sessions.open(operatorName: "bob", role: .viewer)
        }
        #expect(sessions.count == ConsoleSessions.maximumCount)
        _ = sessions.open(operatorName: "cy", role: .viewer)
        #expect(sessions.count == ConsoleSessions.maximumCount && sessions.use(oldest) == nil)
    }

    @Test(arguments: [
        ("rr_console=abc", "abc"), ("a=1; rr_console=abc; b=2", "abc"), ("rr_console = abc ", "abc"),
        ("xrr_console=abc", nil), ("rr_console", nil), ("", nil), ("rr_consolex=abc; other=rr_console=x", nil),
    ] as [(String, String?)])
    func theSessionCookieIsReadByItsExactName(header: String, expected: String?) {
        #expect(ConsoleGate.cookie(ConsoleGate.cookieName, in: header) == expected)
    }

    @Test func aChangeMustComeFromTheConsolesOwnOrigin() {
        let request = HTTPRequest(method: .post, path: "/api/x", headers: ["host": "127.0.0.1:8081"])
        #expect(ConsoleGate.isOwnOrigin("http://127.0.0.1:8081", request: request))
        #expect(ConsoleGate.isOwnOrigin("https://127.0.0.1:8081", request: request))
        #expect(!ConsoleGate.isOwnOrigin("http://127.0.0.1:8080", request: request))
        #expect(!ConsoleGate.isOwnOrigin("null", request: request))
        #expect(!ConsoleGate.isOwnOrigin("http://127.0.0.1:8081", request: HTTPRequest(method: .post, path: "/api/x")))
    }
}
