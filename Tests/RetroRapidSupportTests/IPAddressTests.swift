import Testing
@testable import RetroRapidSupport

@Suite struct IPAddressTests {
    @Test func addressesGetOneSpellingEach() {
        #expect(IPAddress.canonical("192.0.2.1") == "192.0.2.1")
        #expect(IPAddress.canonical("2001:DB8:0:0::1") == "2001:db8::1")
        #expect(IPAddress.canonical("::1") == "::1")
        // How a dual-stack socket reports an IPv4 peer: the IPv4 address it carries.
        #expect(IPAddress.canonical("::ffff:192.0.2.1") == "192.0.2.1")
    }

    @Test func anIPv6AddressIsLimitedAsItsSlash64AndAMappedOneAsItsIPv4Address() {
        #expect(IPAddress.limitKey("192.0.2.1") == "192.0.2.1")
        for address in ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:DB8:0001:0002:abcd::", "2001:db8:1:2::"] {
            #expect(IPAddress.limitKey(address) == "2001:db8:1:2::/64", "\(address)")
        }
        #expect(IPAddress.limitKey("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(IPAddress.limitKey("::1") == "0:0:0:0::/64")
        #expect(IPAddress.limitKey("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(IPAddress.limitKey("::ffff:c000:201") == "192.0.2.1")
        #expect(IPAddress.limitKey("not an address") == "not an address")
        #expect(IPAddress.limitKey("fe80::1%eth0") == "fe80::1%eth0")
    }

    @Test func anythingElseIsNotAnAddress() {
        for text in ["", "localhost", "192.0.2", "192.0.2.256", " 192.0.2.1", "192.0.2.1:80", "10.0.0.0/8", "fe80::1%eth0"] {
            #expect(IPAddress.canonical(text) == nil, "\(text)")
        }
    }
}
