#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A parsed HTTP/1.1 response.
struct TestHTTPResponse {
    var status: Int
    /// Lower-cased names; repeated headers joined with ", ".
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    subscript(header name: String) -> String? { headers[name.lowercased()] }

    /// The body parsed as a JSON object.
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}

struct TestHTTPError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One HTTP/1.1 connection over a plain POSIX socket to 127.0.0.1, so tests see exactly what
/// the server sends. Every read gives up after 5 seconds, so a broken server fails a test
/// instead of hanging it.
final class TestHTTPConnection {
    private let fd: Int32
    private var buffered: [UInt8] = []

    init(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPError("socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let code = TestHTTPConnection.connect(fd, port: port)
        guard code == 0 else {
            close(fd)
            throw TestHTTPError("connect to 127.0.0.1:\(port): \(String(cString: strerror(code)))")
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Returns 0 on success, else errno.
    static func connect(_ fd: Int32, port: Int) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return rc == 0 ? 0 : errno
    }

    /// errno of a fresh connection attempt to the port (0 if it connected).
    static func connectError(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return connect(fd, port: port)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestHTTPError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    /// Sends a request and reads its response. `headers` are added to Host; the body, if any,
    /// gets a Content-Length.
    func request(_ method: String, _ path: String, headers: [String: String] = [:],
                 body: [UInt8] = []) throws -> TestHTTPResponse {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try send(Array(text.utf8) + body)
        return try readResponse(hasBody: method != "HEAD")
    }

    func readResponse(hasBody: Bool = true) throws -> TestHTTPResponse {
        let headerEnd = try readUntil(Array("\r\n\r\n".utf8))
        let head = String(decoding: buffered[..<headerEnd], as: UTF8.self)
        buffered.removeFirst(headerEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw TestHTTPError("not an HTTP/1.x status line: \(head)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        var body: [UInt8] = []
        if hasBody && status != 304 && status != 204 {
            if let length = headers["content-length"].flatMap({ Int($0) }) {
                body = try readExactly(length)
            } else if headers["transfer-encoding"]?.lowercased() == "chunked" {
                body = try readChunked()
            } else {
                body = try readToEnd()
            }
        }
        return TestHTTPResponse(status: status, headers: headers, body: body)
    }

    /// True when the server has closed the connection (read returns 0) within the timeout.
    func isClosedByPeer() -> Bool {
        guard buffered.isEmpty else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n < 0 { throw TestHTTPError("recv: \(String(cString: strerror(errno)))") }
        buffered += chunk[..<n]
        return n > 0
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        while true {
            if let index = firstIndex(of: marker) { return index }
            guard try fill() else { throw TestHTTPError("connection closed before \(marker)") }
        }
    }

    private func firstIndex(of marker: [UInt8]) -> Int? {
        guard buffered.count >= marker.count else { return nil }
        for start in 0...(buffered.count - marker.count) where Array(buffered[start..<start + marker.count]) == marker {
            return start
        }
        return nil
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffered.count < count {
            guard try fill() else { throw TestHTTPError("connection closed after \(buffered.count) of \(count) bytes") }
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[..<count])
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil(Array("\r\n".utf8))
            let sizeText = String(decoding: buffered[..<lineEnd], as: UTF8.self)
            buffered.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else {
                throw TestHTTPError("bad chunk size \(sizeText)")
            }
            body += try readExactly(size)
            _ = try readExactly(2)
            if size == 0 { return body }
        }
    }

    private func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffered.removeAll() }
        return buffered
    }
}

extension TestHTTPConnection {
    /// One request on a fresh connection.
    static func get(_ path: String, port: Int, headers: [String: String] = [:]) throws -> TestHTTPResponse {
        try TestHTTPConnection(port: port).request("GET", path, headers: headers)
    }
}
