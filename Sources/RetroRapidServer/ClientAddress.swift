import Foundation
import RetroRapidSupport

/// Which IP address a request or game connection counts as coming from, for the per-IP limits
/// (HTTP rate limits, game connections per address) and the logs.
///
/// Behind a reverse proxy every connection comes from the proxy, which names the client in
/// `X-Forwarded-For`, appending the address it saw to whatever the header already said. So
/// only a peer in `trustedProxies` is believed, and its header is read from the right: the
/// trusted proxies are skipped and the first other address is the client's ("rightmost
/// untrusted"). Everything to the left of it came from the client and may be forged; a
/// client talking to the server directly cannot move its own bucket at all.
///
/// Pure; any thread. `GameServer` builds the one the server uses, from the configuration's
/// trusted proxies, and hands it to the HTTP layer, the API routes and the game side.
struct ClientAddressResolver: Sendable, Equatable {
    /// Canonical addresses (`IPAddress.canonical`).
    let trustedProxies: Set<String>

    init(trustedProxies: some Sequence<String>) {
        self.trustedProxies = Set(trustedProxies.map { IPAddress.canonical($0) ?? $0 })
    }

    /// No proxy trusted: every client is the peer it connects from (a bare HTTP server, tests).
    static let direct = ClientAddressResolver(trustedProxies: [])

    /// The client's address for a connection from `peer` that sent `forwardedFor` (the whole
    /// X-Forwarded-For value, repeated headers joined with commas; nil when absent).
    func clientAddress(peer: String, forwardedFor: String?) -> String {
        let peer = IPAddress.canonical(peer) ?? peer
        guard trustedProxies.contains(peer), let forwardedFor else { return peer }
        // The nearest hop known so far: the client when every address further left is a
        // proxy of ours, and the one to blame when the next address is not an address.
        var nearest = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let address = IPAddress.canonical(Self.withoutPort(entry)) else { return nearest }
            if !trustedProxies.contains(address) { return address }
            nearest = address
        }
        return nearest
    }

    /// Some proxies write `192.0.2.1:4711` or `[2001:db8::1]:4711`: the port is not the client.
    static func withoutPort(_ entry: Substring) -> Substring {
        let text = Substring(entry.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return text[text.index(after: text.startIndex)..<close]
        }
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            return text[..<colon]
        }
        return text
    }
}
