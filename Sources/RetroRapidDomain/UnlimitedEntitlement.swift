import Foundation

/// Unlimited play held by a player: no daily quota (docs/API.md, "Unlimited play").
public struct UnlimitedEntitlement: Sendable, Equatable {
    /// What granted it.
    public enum Source: String, Sendable, CaseIterable {
        /// An unlock code; the reference is the normalised code.
        case code
        /// A paid order; the reference is the order's public id.
        case order
        /// The operator's CLI; the reference is the operator's note.
        case `operator`
    }

    public let playerID: Int64
    public let source: Source
    public let reference: String
    public let grantedAt: Date

    public init(playerID: Int64, source: Source, reference: String, grantedAt: Date) {
        self.playerID = playerID
        self.source = source
        self.reference = reference
        self.grantedAt = grantedAt
    }
}

extension UnlimitedEntitlement {
    /// The reference a grant stores: trimmed, 1 to 200 characters. Every backend checks it
    /// before it writes (`.invalid` otherwise).
    public static func validatedReference(_ reference: String) throws -> String {
        let reference = reference.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reference.isEmpty, reference.count <= 200 else {
            throw StoreError(.invalid, "The reference must say why unlimited play is granted (1 to 200 characters).", field: "reference")
        }
        return reference
    }
}
