#if canImport(Glibc)
import Glibc
#endif

/// The bytes a TCP connection has received and sent in its whole life, and its state, from
/// Linux's TCP_INFO. Lets the HTTP side tell a connection libwebsockets dropped mid-head,
/// having answered nothing, from one that sent nothing (LWSHTTPConnection.swift).
///
/// glibc's `struct tcp_info` stops before these fields, and <linux/tcp.h> clashes with it, so
/// they are read at their offsets in the kernel's struct (an ABI that only ever grows at the
/// end): `tcpi_state` is the first byte, `tcpi_bytes_received` at 128 (Linux 4.1),
/// `tcpi_bytes_sent` at 200 (Linux 4.19). Written in Swift rather than in a C shim: a shim
/// that includes the socket headers takes their declarations into its own module, and files
/// that import only Glibc then no longer find `SOCK_STREAM`.
public struct TCPByteCounts: Sendable, Equatable {
    public var received: UInt64
    public var sent: UInt64
    /// Linux's TCP state (include/net/tcp_states.h): 1 established, 4 and 5 FIN-wait, 8 close-wait.
    public var state: UInt8

    /// nil when `fd` cannot say (not a TCP socket, closed, or a kernel older than 4.19).
    public init?(socket fd: Int32) {
        #if os(Linux)
        var info = [UInt8](repeating: 0, count: 256)
        var length = socklen_t(info.count)
        guard fd >= 0, getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0, length >= 208 else {
            return nil
        }
        func uint64(at offset: Int) -> UInt64 {
            info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        }
        received = uint64(at: 128)
        sent = uint64(at: 200)
        state = info[0]
        #else
        return nil
        #endif
    }
}
