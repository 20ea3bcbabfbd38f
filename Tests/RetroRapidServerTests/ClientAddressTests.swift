import RetroRapidSupport
import Testing
@testable import RetroRapidServer

/// Who a client is behind reverse proxies: the rightmost untrusted address of X-Forwarded-For,
/// believed only from a trusted peer.
@Suite struct ClientAddressTests {
    let resolver = ClientAddressResolver(trustedProxies: ["127.0.0.1", "10.0.0.2", "2001:db8::2"])

    @Test func aPeerThatIsNotTrustedIsTheClientWhateverItsHeaderSays() {
        #expect(resolver.clientAddress(peer: "198.51.100.4", forwardedFor: "203.0.113.7") == "198.51.100.4")
        #expect(ClientAddressResolver(trustedProxies: []).clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.7")
            == "127.0.0.1")
    }

    @Test func behindATrustedProxyTheAddressItAppendedIsTheClient() {
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.7") == "203.0.113.7")
        // What the client wrote itself stays to the left, and is never read.
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "1.2.3.4, 203.0.113.7") == "203.0.113.7")
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "garbage,203.0.113.7") == "203.0.113.7")
    }

    @Test func trustedProxiesInTheChainAreSkipped() {
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "1.2.3.4, 203.0.113.7, 10.0.0.2") == "203.0.113.7")
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.7,2001:DB8::2") == "203.0.113.7")
        // Only proxies all the way: the furthest one is the client.
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "10.0.0.2") == "10.0.0.2")
    }

    @Test func withoutAUsableHeaderTheNearestHopIsTheClient() {
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: nil) == "127.0.0.1")
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "") == "127.0.0.1")
        // A proxy that wrote something that is not an address is the one to blame (and limit).
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.7, unknown, 10.0.0.2") == "10.0.0.2")
    }

    @Test func addressesCompareInOneSpellingAndPortsAreDropped() {
        #expect(resolver.clientAddress(peer: "::ffff:127.0.0.1", forwardedFor: "203.0.113.7:4711") == "203.0.113.7")
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "[2001:DB8::7]:4711") == "2001:db8::7")
        #expect(resolver.clientAddress(peer: "127.0.0.1", forwardedFor: "2001:db8:0::7") == "2001:db8::7")
    }

    @Test func theServerTrustsWhatTheConfigurationLists() {
        var configuration = ServerConfiguration()
        configuration.trustedProxies = ["10.0.0.2"]
        #expect(GameServer.Options(configuration: configuration).limits.trustedProxies == ["10.0.0.2"])
        #expect(GameServer.Options(configuration: ServerConfiguration()).limits.trustedProxies.isEmpty)
    }

    @Test func theGameSideTakesItsTimeoutsAndQueueBoundFromTheConfiguration() {
        var configuration = ServerConfiguration()
        configuration.helloTimeoutSeconds = 3
        configuration.websocketIdleTimeoutSeconds = 120
        configuration.websocketMaxQueuedMessages = 16
        let limits = WebSocketLimits(configuration: configuration)
        #expect((limits.helloTimeoutSeconds, limits.idleTimeoutSeconds, limits.maxQueuedMessages) == (3, 120, 16))
    }
}
