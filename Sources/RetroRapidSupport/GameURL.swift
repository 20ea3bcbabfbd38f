/// Where players reach one node's game connections straight, without the site's front
/// (`--game-url`): `ws://` or `wss://`, a host (a DNS name, IPv4 or bracketed IPv6 address), an
/// optional port and a path of plain characters, with no user, query or fragment. At most 200
/// bytes, which `cluster_nodes.game_url` holds. It travels to browsers in `welcome` and in
/// refusals that name the node, so nothing but these characters may reach them. Pure.
public struct GameURL: Hashable, Sendable, CustomStringConvertible {
    public static let maximumLength = 200

    /// The URL as given, scheme and host in lower case.
    public let description: String
    /// `scheme://host[:port]`: what the pages' `connect-src` must allow.
    public let connectSource: String

    public init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength, let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "ws" || scheme == "wss" else { return nil }
        let rest = text[separator.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash].lowercased()
        let path = rest[slash...]
        guard let (host, port) = WebOrigin.hostAndPort(Substring(authority)),
              path.isEmpty || path.utf8.allSatisfy(Self.isPathByte) else { return nil }
        let hostAndPort = port.map { "\(host):\($0)" } ?? host
        connectSource = "\(scheme)://\(hostAndPort)"
        description = connectSource + (path.isEmpty ? "/" : path)
    }

    /// Unreserved characters and `/` (RFC 3986): nothing a URL, JSON or HTML would read specially.
    static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// A `connect-src` source for game URLs (`--game-url-sources`): `ws://` or `wss://`, a host
    /// that may start with `*.` (every subdomain), an optional port, nothing after; nil otherwise.
    public static func connectSource(_ text: String) -> String? {
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "ws" || scheme == "wss" else { return nil }
        var authority = Substring(text[separator.upperBound...].lowercased())
        let wildcard = authority.hasPrefix("*.")
        if wildcard { authority = authority.dropFirst(2) }
        // A wildcard stands for DNS names only, never for part of an address.
        guard !(wildcard && authority.hasPrefix("[")), let (host, port) = WebOrigin.hostAndPort(authority) else { return nil }
        return "\(scheme)://\(wildcard ? "*." : "")\(host)\(port.map { ":\($0)" } ?? "")"
    }
}
