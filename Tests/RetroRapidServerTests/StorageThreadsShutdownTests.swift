#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer
import RetroRapidSQL

/// A graceful stop while a ranked start is still on its storage thread: the start is answered
/// `shutting_down` and its play given back before the database closes, so the game is neither
/// left in `running_games` (to be stored as `server_crash` at the next start) nor its cancel
/// refused by a closed queue. The storage thread of the starting player is held at the start's
/// clock read until the shutdown has begun, so the start is answered during the shutdown
/// every time, not only when the timing happens to fall that way.
@Suite("Storage threads: a start in flight when the server stops", .serialized)
struct StorageThreadsShutdownTests {
    /// With one thread and another game running, the other game's save is queued behind the
    /// start, so the start is answered first; with two threads the save runs on the other
    /// thread and can be done before the start is.
    @Test(arguments: [1, 2], [false, true])
    func aStartAnsweredDuringTheStopIsCancelledBeforeTheDatabaseCloses(threads: Int, anotherGameRunning: Bool) throws {
        let gate = StorageGate(thread: threads == 1 ? "rr-storage" : "rr-storage-1")
        let server = try RunningGameServer { options in
            options.configuration.storageThreads = threads
            options.clock = gate.clock
        }
        let worker = server.server.worker
        let database = try server.database()
        try database.execute(sql: """
            CREATE TABLE test_begun (public_id TEXT NOT NULL);
            CREATE TRIGGER test_watch_begin AFTER INSERT ON running_games
            BEGIN INSERT INTO test_begun VALUES (NEW.public_id); END;
            """)

        // The starting player on the held thread; the other on the serial lane (with one
        // thread, the same).
        let players = SQLPlayerRepository(executor: SQLiteExecutor(database: database))
        var starter: (id: Int64, token: String)?
        var other: (id: Int64, token: String)?
        while starter == nil || other == nil {
            let (player, token) = try players.createPlayer(displayName: "Racer", deviceLabel: "test", now: Date())
            if worker.lane(orderedBy: player.id).index == threads - 1, starter == nil {
                starter = (player.id, token)
            } else if worker.lane(orderedBy: player.id) == worker.serialLane, other == nil {
                other = (player.id, token)
            }
        }

        let starting = try GameSocket(port: server.port)
        try starting.signIn(token: starter!.token)
        var waiting: GameSocket?
        if anotherGameRunning {
            let socket = try GameSocket(port: server.port)
            try socket.signIn(token: other!.token)
            try socket.send(["type": "start", "level": "cruise", "practice": false])
            try #require(try socket.next(ofType: "started") != nil)
            try socket.send(["type": "pause"])
            try #require(try socket.next(ofType: "paused") != nil)
            waiting = socket
        }

        gate.arm()
        try starting.send(["type": "start", "level": "cruise", "practice": false])
        try #require(gate.entered.wait(timeout: .now() + 30) == .success, "the start never reached its storage thread")

        let stopped = DispatchSemaphore(value: 0)
        let gameServer = server.server
        DispatchQueue.global().async {
            gameServer.stop()
            stopped.signal()
        }
        // Hold the start until the shutdown waits for it, or (as it did before) has gone on
        // without it and closed the worker's queues. With one thread and a save queued behind
        // the start, the shutdown cannot go on while it is held: release it once it began.
        let closed = QueuesClosed()
        let saveQueuedBehind = threads == 1 && anotherGameRunning
        let deadline = Date().addingTimeInterval(60)
        while !closed.seen && Date() < deadline, !server.logs.records.contains(where: {
            $0.message == "ending every game for shutdown" && (saveQueuedBehind || $0.metadata["games.starting"] == "1")
        }) {
            worker.perform({ _ in }, then: { result in
                if case .failure = result { closed.seen = true }
            })
            usleep(10_000)
        }
        gate.release()

        let heard = try starting.messagesUntilClosed()
        try #require(stopped.wait(timeout: .now() + 60) == .success, "the stop did not finish")
        #expect(heard.contains { $0["type"] as? String == "error" && $0["code"] as? String == "shutting_down"
            && $0["inReplyTo"] as? String == "start" }, "the start is refused: \(heard)")
        if let waiting {
            let last = try waiting.messagesUntilClosed()
            #expect(last.contains { $0["type"] as? String == "gameOver" && $0["reason"] as? String == "shutdown" },
                    "the other game is saved: \(last)")
        }

        let begun = try database.prepare("SELECT count(*) FROM test_begun").query { $0.int(at: 0) }.first
        #expect(begun == (anotherGameRunning ? 2 : 1))
        #expect(try server.count("running_games") == 0, "no game is left for the crash recovery")
        #expect(try server.count("games") == (anotherGameRunning ? 1 : 0))
        let quota = try SQLQuotaRepository(executor: SQLiteExecutor(database: database)).status(playerID: starter!.id, now: Date())
        #expect(quota.playsUsed == 0, "the play of the start is given back")
        let failures = server.logs.records.filter { $0.level >= .warning && $0.message.contains("could not") }
        #expect(failures.isEmpty, "\(failures.map { "\($0.message) \($0.metadata)" })")
    }
}

/// Set by a probe job's completion once the worker refuses work: its queues are closed.
private final class QueuesClosed: Sendable {
    private let flag = Atomic<Bool>(false)

    var seen: Bool {
        get { flag.load(ordering: .acquiring) }
        set { flag.store(newValue, ordering: .releasing) }
    }
}

/// Holds one storage thread at its next clock read once armed, until released: the job
/// reading it (and every job queued behind it on that thread) waits.
private final class StorageGate: Sendable {
    /// The held thread's name, as /proc/thread-self/comm reads it.
    let thread: String
    let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let armed = Atomic<Bool>(false)

    init(thread: String) {
        self.thread = thread + "\n"
    }

    func arm() {
        armed.store(true, ordering: .releasing)
    }

    func release() {
        released.signal()
    }

    var clock: @Sendable () -> Date {
        { [self] in
            if armed.load(ordering: .acquiring),
               (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) == thread,
               armed.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged {
                entered.signal()
                released.wait()
            }
            return Date()
        }
    }
}

/// A game client on /ws over a plain POSIX socket: the upgrade, masked text frames out, JSON
/// messages in (docs/PROTOCOL.md). Every read gives up after 10 seconds, so a server that
/// never answers fails the test instead of hanging it.
private final class GameSocket {
    private let fd: Int32
    private var buffered: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPError("socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let code = TestHTTPConnection.connect(fd, port: port)
        guard code == 0 else { throw TestHTTPError("connect: \(String(cString: strerror(code)))") }
        try write(Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: retrorapid.v1\r\n\r\n").utf8))
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffered[..<end], as: UTF8.self)
                buffered.removeFirst(end + 4)
                guard head.hasPrefix("HTTP/1.1 101") else { throw TestHTTPError("upgrade refused: \(head)") }
                return
            }
            guard try fill() else { throw TestHTTPError("closed during the upgrade") }
        }
    }

    deinit {
        close(fd)
    }

    /// `hello`, and its `welcome`.
    func signIn(token: String) throws {
        try send(["type": "hello", "token": token, "client": "test"])
        guard try next(ofType: "welcome") != nil else { throw TestHTTPError("no welcome") }
    }

    func send(_ message: [String: Any]) throws {
        let payload = Array(try JSONSerialization.data(withJSONObject: message))
        precondition(payload.count < 65536)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try write(frame)
    }

    private func sendClose(_ status: [UInt8]) throws {
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        try write([0x88, 0x80 | UInt8(status.count)] + mask + status.enumerated().map { $0.element ^ mask[$0.offset % 4] })
    }

    /// The next message of `type` (others skipped), or nil if the server closed first.
    func next(ofType type: String) throws -> [String: Any]? {
        while let message = try next() {
            if message["type"] as? String == type { return message }
        }
        return nil
    }

    /// Every message until the server's close frame (or the end of the connection).
    func messagesUntilClosed() throws -> [[String: Any]] {
        var messages: [[String: Any]] = []
        while let message = try next() { messages.append(message) }
        return messages
    }

    /// The next JSON message, or nil at a close frame or the connection's end.
    private func next() throws -> [String: Any]? {
        var message: [UInt8] = []
        while true {
            guard let header = try read(2) else { return nil }
            var length = Int(header[1] & 0x7F)
            if length == 126 {
                guard let bytes = try read(2) else { return nil }
                length = Int(bytes[0]) << 8 | Int(bytes[1])
            } else if length == 127 {
                guard let bytes = try read(8) else { return nil }
                length = bytes.reduce(0) { $0 << 8 | Int($1) }
            }
            guard let payload = try read(length) else { return nil }
            switch header[0] & 0x0F {
            case 0x8:
                // The closing handshake: echo the status, as a client does.
                try? sendClose(Array(payload.prefix(2)))
                return nil
            case 0x0, 0x1:
                message += payload
                if header[0] & 0x80 != 0 {
                    guard let object = try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else {
                        throw TestHTTPError("not a JSON object: \(String(decoding: message, as: UTF8.self))")
                    }
                    return object
                }
            default: continue  // ping, pong
            }
        }
    }

    private func read(_ count: Int) throws -> [UInt8]? {
        while buffered.count < count {
            guard try fill() else { return nil }
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[..<count])
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n < 0 {
            if errno == ECONNRESET { return false }
            throw TestHTTPError("recv: \(String(cString: strerror(errno)))")
        }
        buffered += chunk[..<n]
        return n > 0
    }

    private func headEnd() -> Int? {
        let marker = Array("\r\n\r\n".utf8)
        guard buffered.count >= 4 else { return nil }
        return (0...(buffered.count - 4)).first { Array(buffered[$0..<$0 + 4]) == marker }
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestHTTPError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}
