import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

@Suite("Answers that come later")
struct AsyncResponseTests {
    private static func context(root: TemporaryWebRoot, handler: @escaping HTTPHandler) -> LWSContext {
        LWSContext(options: LWSContextOptions(
            address: "127.0.0.1", port: 0,
            mounts: [.files(mountpoint: "/", directory: root.url.path, defaultFile: "index.html", extraMimeTypes: []),
                     .callback(mountpoint: "/api")],
            responseHeaders: [], httpHandler: handler))
    }

    /// The number of live exchanges, read on the service thread.
    private static func openExchanges(_ context: LWSContext) -> Int {
        let count = Mutex(-1)
        let done = DispatchSemaphore(value: 0)
        context.mailbox.post {
            count.withLock { $0 = context.openExchangeCount }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 2)
        return count.withLock { $0 }
    }

    @Test func anAnswerGivenLaterFromAnotherThreadIsWrittenOnTheServiceThread() throws {
        let root = try TemporaryWebRoot()
        let box = Mutex<LWSContext?>(nil)
        let wroteOnServiceThread = Mutex<Bool?>(nil)
        let context = Self.context(root: root) { request, responder in
            let observed = responder.observing { _ in
                wroteOnServiceThread.withLock { $0 = box.withLock { $0 }?.isServiceThread }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
                observed.respond(.json(#"{"later":true}"#))
            }
        }
        box.withLock { $0 = context }
        let port = try context.start()
        defer { context.stop(); box.withLock { $0 = nil } }

        let response = try TestHTTPConnection(port: port).request("GET", "/api/later")
        #expect(response.status == 200)
        #expect(response.text == #"{"later":true}"#)
        // `observing` runs where `respond` was called: the worker's thread here; the write itself
        // happened on the service thread (the connection got it).
        #expect(wroteOnServiceThread.withLock { $0 } == false)
    }

    @Test func anAnswerForAClientThatLeftIsDroppedAndTheServerCarriesOn() throws {
        let root = try TemporaryWebRoot()
        let waiting = Mutex<HTTPResponder?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let context = Self.context(root: root) { request, responder in
            if request.path == "/api/slow" {
                waiting.withLock { $0 = responder }
                arrived.signal()
            } else {
                responder.respond(.json("{}"))
            }
        }
        let port = try context.start()

        var client: TestHTTPConnection? = try TestHTTPConnection(port: port)
        try client?.send("GET /api/slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(arrived.wait(timeout: .now() + 2) == .success)
        client = nil  // the client gives up and closes its socket
        let deadline = ContinuousClock.now + .seconds(2)
        while Self.openExchanges(context) != 0 && ContinuousClock.now < deadline { usleep(5_000) }

        waiting.withLock { $0 }?.respond(.json(#"{"too":"late"}"#))
        #expect(try TestHTTPConnection.get("/api/next", port: port).status == 200)
        context.stop()
        #expect(context.droppedAnswerCount == 1)
        #expect(context.openExchangeCount == 0)
    }

    @Test func onlyTheFirstAnswerCounts() throws {
        let root = try TemporaryWebRoot()
        let context = Self.context(root: root) { _, responder in
            responder.respond(.json(#"{"n":1}"#))
            responder.respond(.json(#"{"n":2}"#))
        }
        let port = try context.start()
        defer { context.stop() }
        #expect(try TestHTTPConnection.get("/api/twice", port: port).text == #"{"n":1}"#)
    }

    @Test func theServiceThreadKeepsServingWhileTheDatabaseIsBusy() throws {
        let data = try TemporaryDataFolder()
        let root = try TemporaryWebRoot()
        let mailbox = ServiceMailbox()
        let worker = try DatabaseWorker(configuration: data.configuration(), mailbox: mailbox)
        defer { worker.shutdown() }
        var router = HTTPRouter.standard
        router.add(.get, "/api/v1/slow") { _, responder in
            worker.perform({ _ in usleep(500_000) }, then: { _ in responder.respond(.json(#"{"slow":true}"#)) })
        }
        let server = HTTPServer(configuration: HTTPServerOptions(host: "127.0.0.1", port: 0, webRoot: root.url.path),
                                router: router, mailbox: mailbox)
        try server.start()
        defer { server.stop() }
        let port = server.boundPort!

        let slow = try TestHTTPConnection(port: port)
        try slow.send("GET /api/v1/slow HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(50_000)  // the job is on the storage thread now
        let clock = ContinuousClock()
        var fast: TestHTTPResponse?
        let elapsed = try clock.measure { fast = try TestHTTPConnection.get("/healthz", port: port) }
        #expect(fast?.status == 200)
        #expect(elapsed < .milliseconds(300))
        #expect(try slow.readResponse().text == #"{"slow":true}"#)
    }
}

/// Stands in for the WebSocket side in a graceful stop: when told, it saves "its games"
/// through the worker and reports done.
final class ShutdownRecorder: ServerComponent, @unchecked Sendable {
    // @unchecked: `worker` is a let; `calls` is a Mutex.
    let worker: DatabaseWorker
    let calls = Mutex<[String]>([])

    init(worker: DatabaseWorker) {
        self.worker = worker
    }

    var protocols: [LWSProtocolDefinition] { [] }

    func beginShutdown(_ done: @escaping @Sendable () -> Void) {
        calls.withLock { $0.append("beginShutdown") }
        // The game's score is submitted, and `done` comes before it is written: the worker
        // must still finish it before the database closes.
        worker.perform({ storage in
            usleep(100_000)
            _ = try storage.players.createPlayer(displayName: "Saved at shutdown", deviceLabel: "", now: storage.now)
        }, then: { _ in })
        done()
    }
}

@Suite("Graceful stop")
struct GracefulStopTests {
    @Test func stopEndsTheGameSideFirstThenFinishesEveryQueuedWrite() throws {
        let recorder = Mutex<ShutdownRecorder?>(nil)
        let server = try RunningGameServer(components: { context in
            let made = ShutdownRecorder(worker: context.worker)
            recorder.withLock { $0 = made }
            return [made]
        })
        _ = try server.createPlayer("Ada")
        let port = server.port

        server.server.stop()

        #expect(recorder.withLock { $0 }?.calls.withLock { $0 } == ["beginShutdown"])
        #expect(TestHTTPConnection.connectError(port: port) == ECONNREFUSED)
        let names = try server.database().prepare("SELECT display_name FROM players ORDER BY id").query { $0.string(at: 0) }
        #expect(names == ["Ada", "Saved at shutdown"])
        server.server.stop()  // again: nothing happens
    }

    @Test func afterStopAcceptingNewConnectionsAreClosedAndOpenOnesStillServed() throws {
        let server = try RunningGameServer()
        let open = try TestHTTPConnection(port: server.port)
        #expect(try open.request("GET", "/").status == 200)

        server.server.http.stopAccepting()

        let late = try TestHTTPConnection(port: server.port)
        #expect(throws: (any Error).self) { try late.request("GET", "/healthz") }
        #expect(try open.request("GET", "/app.js").status == 200)
    }

    @Test func healthzSaysStoppingOnceAStopBegins() throws {
        var router = HTTPRouter()
        OperationsRoutes.add(to: &router, metrics: nil, openAPI: nil, isStopping: { true })
        #expect(router.response(for: HTTPRequest(method: .get, path: "/healthz"))?.status == 503)
    }
}
