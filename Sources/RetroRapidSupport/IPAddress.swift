#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Numeric IP addresses as text, in one spelling each, so that addresses from a flag, from a
/// socket and from an `X-Forwarded-For` header compare equal when they name the same host.
/// Pure; any thread.
public enum IPAddress {
    /// The address in its canonical form (what `inet_ntop` writes), or nil when `text` is not a
    /// numeric IPv4 or IPv6 address. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a
    /// dual-stack socket reports an IPv4 peer) becomes the IPv4 address it carries.
    public static func canonical(_ text: some StringProtocol) -> String? {
        let text = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { format(family: AF_INET, $0, length: INET_ADDRSTRLEN) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        return withUnsafeBytes(of: &v6) { format(family: AF_INET6, $0, length: INET6_ADDRSTRLEN) }
    }

    /// The key a client address is counted under by the per-address limits (guesses, new
    /// players, game and HTTP connections): an IPv4 address itself, an IPv4-mapped IPv6 address
    /// the IPv4 address it carries, any other IPv6 address its /64 network, e.g.
    /// `2001:db8:1:2::/64` (one subscriber usually gets a whole /64, and could otherwise walk
    /// through 2^64 addresses). Text that is not an address is its own key.
    public static func limitKey(_ address: String) -> String {
        var v6 = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        // The first four groups in lowercase hex without leading zeros, as `inet_ntop` writes
        // them but never shortened with `::`, so one network has one spelling.
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    private static func format(family: Int32, _ address: UnsafeRawBufferPointer, length: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(length))
        guard inet_ntop(family, address.baseAddress, &buffer, socklen_t(length)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
