import Synchronization
import Testing
@testable import RetroRapidServer

@Suite("LWSContext")
struct LWSContextTests {
    private func options(root: TemporaryWebRoot,
                         handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) -> LWSContextOptions {
        LWSContextOptions(
            address: "127.0.0.1", port: 0,
            mounts: [.files(mountpoint: "/", directory: root.url.path, defaultFile: "index.html", extraMimeTypes: []),
                     .callback(mountpoint: "/api")],
            responseHeaders: [], httpHandler: { request, responder in responder.respond(handler(request)) })
    }

    @Test func everyConnectionsExchangeIsReleasedByTheTimeTheContextIsGone() throws {
        let root = try TemporaryWebRoot()
        let context = LWSContext(options: options(root: root) { _ in .json("{}") })
        let port = try context.start()
        do {
            for _ in 0..<3 { _ = try TestHTTPConnection.get("/api/x", port: port) }
            _ = try TestHTTPConnection(port: port).request("POST", "/api/x", body: [1, 2, 3])
            let files = try TestHTTPConnection(port: port)
            _ = try files.request("GET", "/")
            _ = try files.request("GET", "/api/after-a-file")
            _ = try TestHTTPConnection.get("/api/y", port: port)
            _ = try TestHTTPConnection.get("/missing", port: port)
            _ = try TestHTTPConnection.get("/", port: port)
            // A client that gives up halfway through its body.
            let quitter = try TestHTTPConnection(port: port)
            try quitter.send("POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        }
        context.stop()
        #expect(context.openExchangeCount == 0)
    }

    @Test func handlersRunOnTheServiceThread() throws {
        let root = try TemporaryWebRoot()
        let box = Mutex<LWSContext?>(nil)
        let onServiceThread = Mutex<Bool?>(nil)
        let context = LWSContext(options: options(root: root) { _ in
            onServiceThread.withLock { $0 = box.withLock { $0 }?.isServiceThread }
            return .json("{}")
        })
        box.withLock { $0 = context }
        let port = try context.start()
        _ = try TestHTTPConnection.get("/api/where", port: port)
        context.stop()
        #expect(onServiceThread.withLock { $0 } == true)
        #expect(context.isServiceThread == false)
    }

    @Test func stopCalledFromAHandlerDoesNotDeadlock() throws {
        let root = try TemporaryWebRoot()
        let box = Mutex<LWSContext?>(nil)
        let context = LWSContext(options: options(root: root) { _ in
            box.withLock { $0 }?.stop()
            return .json("{}")
        })
        box.withLock { $0 = context }
        let port = try context.start()
        _ = try? TestHTTPConnection.get("/api/stop", port: port)
        context.wait()
        box.withLock { $0 = nil }
        #expect(TestHTTPConnection.connectError(port: port) != 0)
    }
}
