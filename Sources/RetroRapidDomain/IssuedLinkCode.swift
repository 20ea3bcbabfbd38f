import Foundation

/// A link code just created, to show on the device that asked for it.
public struct IssuedLinkCode: Sendable, Hashable {
    /// Grouped for reading aloud and typing: `K7Q4-M2XD`.
    public let code: String
    public let expiresAt: Date

    package init(code: String, expiresAt: Date) {
        self.code = code
        self.expiresAt = expiresAt
    }
}
