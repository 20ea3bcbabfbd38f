#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Testing
import RetroRapidSupport
@testable import RetroRapidServer

@Suite("HTTP server lifecycle")
struct HTTPServerLifecycleTests {
    @Test func portZeroBindsAKernelChosenPortThatIsReadableAfterwards() throws {
        let root = try TemporaryWebRoot()
        let server = HTTPServer(configuration: HTTPServerOptions(host: "127.0.0.1", port: 0, webRoot: root.url.path))
        #expect(server.boundPort == nil)
        try server.start()
        let port = try #require(server.boundPort)
        #expect(port > 0)
        #expect(try TestHTTPConnection.get("/healthz", port: port).status == 200)
        server.stop()
        #expect(server.boundPort == nil)
    }

    /// libev (the default) and libwebsockets' own poll loop (`--event-loop poll`) each serve,
    /// close their connections when stopped, free the port and can start again: they stop in
    /// different ways (ev_break from the mailbox's wakeup; the flag after lws_service returns).
    @Test(arguments: EventLoop.allCases)
    func eachEventLoopServesStopsAndStartsAgain(_ loop: EventLoop) throws {
        let root = try TemporaryWebRoot()
        let server = HTTPServer(configuration: HTTPServerOptions(host: "127.0.0.1", port: 0, webRoot: root.url.path,
                                                                 eventLoop: loop))
        for _ in 1...2 {
            try server.start()
            let port = try #require(server.boundPort)
            let idle = try TestHTTPConnection(port: port)
            #expect(try idle.request("GET", "/healthz").status == 200)
            server.stop()
            #expect(idle.isClosedByPeer())
            #expect(TestHTTPConnection.connectError(port: port) == ECONNREFUSED)
        }
    }

    @Test func aPortInUseIsAClearError() throws {
        let first = try RunningTestServer()
        let second = HTTPServer(configuration: HTTPServerOptions(host: "127.0.0.1", port: first.port,
                                                                webRoot: first.webRoot.url.path))
        do {
            try second.start()
            Issue.record("a second server started on port \(first.port)")
        } catch {
            #expect(error.code == .portInUse)
            #expect(error.description.contains("already in use"))
            #expect(error.description.contains("\(first.port)"))
        }
        #expect(second.boundPort == nil)
        // The first server is untouched.
        #expect(try first.get("/healthz").status == 200)
    }

    @Test func stopReturnsPromptlyClosesConnectionsAndFreesThePort() throws {
        let server = try RunningTestServer()
        let idle = try TestHTTPConnection(port: server.port)
        #expect(try idle.request("GET", "/healthz").status == 200)

        let elapsed = ContinuousClock().measure { server.server.stop() }

        #expect(elapsed < .seconds(2))
        #expect(idle.isClosedByPeer())
        #expect(TestHTTPConnection.connectError(port: server.port) == ECONNREFUSED)
    }

    @Test func stopIsSafeFromManyThreadsAtOnceAndMoreThanOnce() throws {
        let running = try RunningTestServer()
        let server = running.server
        let port = running.port
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            server.stop()
            // Each caller returns only once the server is down.
            #expect(TestHTTPConnection.connectError(port: port) == ECONNREFUSED)
        }
        server.stop()
        #expect(server.boundPort == nil)
    }

    @Test func aStoppedServerCanStartAgain() throws {
        let server = try RunningTestServer()
        server.server.stop()
        try server.server.start()
        let port = try #require(server.server.boundPort)
        #expect(try TestHTTPConnection.get("/healthz", port: port).status == 200)
    }

    @Test func startingTwiceIsAnError() throws {
        let server = try RunningTestServer()
        #expect(throws: HTTPServerError.self) { try server.server.start() }
        #expect(try server.get("/healthz").status == 200)
    }

    @Test func releasingTheServerStopsIt() throws {
        let root = try TemporaryWebRoot()
        var server: HTTPServer? = HTTPServer(configuration: HTTPServerOptions(host: "127.0.0.1", port: 0, webRoot: root.url.path))
        try server?.start()
        let port = try #require(server?.boundPort)
        server = nil
        #expect(TestHTTPConnection.connectError(port: port) == ECONNREFUSED)
    }

    @Test(arguments: [
        ("example.com", HTTPServerError.Code.invalidHost),
        ("eth0", .invalidHost),
        ("192.0.2.1", .addressUnavailable),  // TEST-NET-1: never this machine's
    ])
    func hostsThatCannotBeListenedOnAreClearErrors(host: String, code: HTTPServerError.Code) throws {
        let root = try TemporaryWebRoot()
        let server = HTTPServer(configuration: HTTPServerOptions(host: host, port: 0, webRoot: root.url.path))
        do {
            try server.start()
            Issue.record("started on \(host)")
        } catch {
            #expect(error.code == code)
        }
    }

    @Test(arguments: ["0.0.0.0", "::", "localhost"])
    func hostsThatIncludeLoopbackServeIt(host: String) throws {
        let root = try TemporaryWebRoot()
        let server = HTTPServer(configuration: HTTPServerOptions(host: host, port: 0, webRoot: root.url.path))
        try server.start()
        defer { server.stop() }
        #expect(try TestHTTPConnection.get("/healthz", port: server.boundPort!).status == 200)
    }

    @Test func tlsNeedsBothFiles() throws {
        let root = try TemporaryWebRoot()
        let server = HTTPServer(configuration: HTTPServerOptions(
            host: "127.0.0.1", port: 0, webRoot: root.url.path, tlsCertificatePath: "/nonexistent/cert.pem"))
        do {
            try server.start()
            Issue.record("started with half a TLS configuration")
        } catch {
            #expect(error.code == .tlsFilesMissing)
        }
    }
}
