#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A game connection (`/ws`, `retrorapid.v1`) over a plain POSIX socket to 127.0.0.1, for the
/// tests with several servers in one process: the opening handshake, masked text frames out,
/// frames in (pings answered), the close frame's code. Every read gives up after 10 seconds, so
/// a message that never comes fails the test instead of hanging it.
final class ClusterWebSocketClient {
    private let fd: Int32
    private var buffered: [UInt8] = []
    /// Text messages read so far, oldest first, as JSON objects.
    private(set) var received: [[String: Any]] = []

    /// What ended the connection.
    struct Closed: Error, CustomStringConvertible {
        /// The close frame's status code; nil when the socket ended without one.
        var code: UInt16?
        var reason: String
        var description: String { "connection closed (\(code.map(String.init) ?? "no close frame")): \(reason)" }
    }

    /// Connects and completes the upgrade to the game protocol.
    init(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPError("socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let code = TestHTTPConnection.connect(fd, port: port)
        guard code == 0 else {
            close(fd)
            throw TestHTTPError("connect to 127.0.0.1:\(port): \(String(cString: strerror(code)))")
        }
        self.fd = fd
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try write(Array("""
            GET /ws HTTP/1.1\r
            Host: 127.0.0.1:\(port)\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Key: \(key)\r
            Sec-WebSocket-Version: 13\r
            Sec-WebSocket-Protocol: retrorapid.v1\r
            \r\n
            """.utf8))
        var head: [UInt8] = []
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            head.append(try readBytes(1)[0])
        }
        let status = String(decoding: head, as: UTF8.self)
        guard status.hasPrefix("HTTP/1.1 101") else { throw TestHTTPError("upgrade refused: \(status)") }
    }

    deinit {
        close(fd)
    }

    /// Opens a connection on `port` and signs in with `token`; returns it once `welcome` came.
    static func signedIn(port: Int, token: String) throws -> ClusterWebSocketClient {
        let client = try ClusterWebSocketClient(port: port)
        try client.send(["type": "hello", "token": token, "client": "swift test"])
        _ = try client.next("welcome")
        return client
    }

    func send(_ message: [String: Any]) throws {
        try sendFrame(opcode: 0x1, Array(try JSONSerialization.data(withJSONObject: message)))
    }

    /// Reads until a message of `type` comes and returns it; throws `Closed` if the server
    /// closes first.
    func next(_ type: String) throws -> [String: Any] {
        while true {
            let message = try nextMessage()
            if message["type"] as? String == type { return message }
        }
    }

    /// The next text message.
    func nextMessage() throws -> [String: Any] {
        while true {
            let (opcode, payload) = try readFrame()
            switch opcode {
            case 0x1:
                guard let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
                    throw TestHTTPError("not a JSON object: \(String(decoding: payload, as: UTF8.self))")
                }
                received.append(object)
                return object
            case 0x8:
                let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
                throw Closed(code: code, reason: String(decoding: payload.dropFirst(2), as: UTF8.self))
            case 0x9:
                try sendFrame(opcode: 0xA, payload)
            default:
                continue
            }
        }
    }

    /// Reads until the server closes; returns the close frame's code and reason.
    func closed() throws -> Closed {
        do {
            while true { _ = try nextMessage() }
        } catch let closed as Closed {
            return closed
        }
    }

    // MARK: - Frames

    private func sendFrame(opcode: UInt8, _ payload: [UInt8]) throws {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame.append(0x80 | 126)
            frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try write(frame)
    }

    /// One whole message: fragments are joined, control frames come on their own.
    private func readFrame() throws -> (opcode: UInt8, payload: [UInt8]) {
        var message: [UInt8] = []
        var messageOpcode: UInt8 = 0
        while true {
            let head = try readBytes(2)
            let fin = head[0] & 0x80 != 0, opcode = head[0] & 0x0F
            var length = Int(head[1] & 0x7F)
            if length == 126 {
                let bytes = try readBytes(2)
                length = Int(bytes[0]) << 8 | Int(bytes[1])
            } else if length == 127 {
                length = try readBytes(8).reduce(0) { $0 << 8 | Int($1) }
            }
            let payload = try readBytes(length)
            if opcode >= 0x8 { return (opcode, payload) }
            if opcode != 0 { messageOpcode = opcode }
            message += payload
            if fin { return (messageOpcode, message) }
        }
    }

    private func readBytes(_ count: Int) throws -> [UInt8] {
        while buffered.count < count {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let got = recv(fd, &chunk, chunk.count, 0)
            if got == 0 { throw Closed(code: nil, reason: "the server closed the socket") }
            guard got > 0 else { throw TestHTTPError("read: \(String(cString: strerror(errno)))") }
            buffered += chunk[0..<got]
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[0..<count])
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let wrote = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard wrote > 0 else { throw TestHTTPError("write: \(String(cString: strerror(errno)))") }
            sent += wrote
        }
    }
}
