import Foundation

/// What the site's own pages need to know about who runs it: today the address the
/// accessibility statement's "Tell us" links to (`--accessibility-contact`), so a player who
/// meets a barrier has a real way to say so. Public: nothing here identifies a player.
enum SiteRoutes {
    private struct Contact: Encodable {
        /// An https: or mailto: address checked by the configuration, or null when not set.
        let accessibility: String?

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(accessibility, forKey: .accessibility)  // null, not missing
        }

        enum CodingKeys: String, CodingKey { case accessibility }
    }

    static func add(to router: inout HTTPRouter, accessibilityContact: String?) {
        let contact = Contact(accessibility: accessibilityContact)
        router.add(.get, "/api/v1/contact") { _ in
            (try? APIJSON.response(contact))
                ?? APIError(status: 500, code: "internal", message: "The contact could not be written.").response
        }
    }
}
