#if canImport(Glibc)
import Glibc
#endif
import RetroRapidSupport
import Testing

/// `TCPByteCounts` (Sources/RetroRapidSupport/TCPByteCounts.swift) reads the kernel's TCP_INFO at fixed
/// offsets; this holds them to what a real loopback connection carried.
@Suite struct TCPByteCountsTests {
    @Test func theCountsAreTheBytesEachWayAndTheStateIsEstablished() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try #require(withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        })
        try #require(listen(listener, 1) == 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        try #require(withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) == 0 }
        })
        let server = accept(listener, nil, nil)
        defer { close(server) }
        try #require(server >= 0)

        let request = [UInt8](repeating: 65, count: 1234)
        #expect(send(client, request, request.count, 0) == request.count)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var read = 0
        while read < request.count { read += recv(server, &buffer, buffer.count, 0) }
        let answer = [UInt8](repeating: 66, count: 321)
        #expect(send(server, answer, answer.count, 0) == answer.count)
        usleep(50_000)

        let counts = try #require(TCPByteCounts(socket: server))
        #expect(counts.received == 1234)
        #expect(counts.sent == 321)
        #expect(counts.state == 1)  // TCP_ESTABLISHED
        #expect(TCPByteCounts(socket: -1) == nil)
    }
}
