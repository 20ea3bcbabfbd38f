/// A web origin as a browser sends it in `Origin` (RFC 6454): `http` or `https`, a host, and
/// a port when it is not the scheme's default, with no path. The configuration reads
/// `--allowed-origins` with it and the game side compares a WebSocket upgrade's `Origin` with
/// it, so both agree on what one origin is. Pure.
public struct WebOrigin: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`, lowercase.
    public let scheme: String
    /// Lowercase; an IPv6 address keeps its brackets (`[::1]`).
    public let host: String
    /// The port, always explicit (the scheme's default when the text named none).
    public let port: Int

    /// Parses `scheme://host[:port]`; nil for anything else (another scheme, a path, user
    /// information, `null`, which a sandboxed page or a file sends).
    public init?(_ text: String) {
        let lowered = text.lowercased()
        guard let separator = lowered.range(of: "://") else { return nil }
        let scheme = String(lowered[..<separator.lowerBound])
        guard let defaultPort = Self.defaultPorts[scheme],
              let (host, port) = Self.hostAndPort(lowered[separator.upperBound...]) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port ?? defaultPort
    }

    /// The origin as browsers write it: the default port left out.
    public var description: String {
        port == Self.defaultPorts[scheme] ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }

    /// The WebSocket URL prefix for the same host and port (`https` → `wss`), as a CSP
    /// `connect-src` source.
    public var webSocketForm: String {
        let webSocketScheme = scheme == "https" ? "wss" : "ws"
        return port == Self.defaultPorts[scheme] ? "\(webSocketScheme)://\(host)" : "\(webSocketScheme)://\(host):\(port)"
    }

    /// Whether the origin names the host and port of a request's `Host` header (`host[:port]`;
    /// without a port, the origin's scheme's default). That is a page of this very site.
    public func isSameSite(asHost header: String) -> Bool {
        guard let (host, port) = Self.hostAndPort(Substring(header.lowercased())) else { return false }
        return host == self.host && (port ?? Self.defaultPorts[scheme]) == self.port
    }

    static let defaultPorts = ["http": 80, "https": 443]

    /// `host[:port]` with a DNS name, IPv4 address or bracketed IPv6 address; nil otherwise.
    static func hostAndPort(_ text: Substring) -> (host: String, port: Int?)? {
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            let inside = host.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            if let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." })
            else { return nil }
        }
        guard let portText else { return (String(host), nil) }
        guard (1...5).contains(portText.count), portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }
}
