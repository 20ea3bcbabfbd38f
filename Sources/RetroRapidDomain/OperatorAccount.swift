import Foundation

/// Someone who runs the service: signs in to the operator console (never as a player, and
/// never with a player's device), with a role that says what they may change.
public struct OperatorAccount: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        /// Sees everything the console shows, changes nothing.
        case viewer
        /// Also changes things: players, codes, orders.
        case admin
    }

    public let id: Int64
    /// Lowercase letters, digits, `.`, `_` and `-`, 2 to 32 characters (``validatedName(_:)``).
    public let name: String
    public let role: Role
    public let createdAt: Date
    /// When the password in use was made (by `add` or `reset`).
    public let passwordSetAt: Date
    /// When the account was disabled for good; nil while it may sign in.
    public let disabledAt: Date?

    public init(id: Int64, name: String, role: Role, createdAt: Date, passwordSetAt: Date, disabledAt: Date?) {
        self.id = id
        self.name = name
        self.role = role
        self.createdAt = createdAt
        self.passwordSetAt = passwordSetAt
        self.disabledAt = disabledAt
    }

    public var isDisabled: Bool { disabledAt != nil }

    /// `name` as stored: trimmed and lowercased, then checked. `StoreError(.invalid)` with the
    /// field "name" names what is wrong.
    public static func validatedName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
        guard (2...32).contains(trimmed.count) else {
            throw StoreError(.invalid, "An operator's name is 2 to 32 characters, got \(trimmed.count).", field: "name")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        guard trimmed.allSatisfy(allowed.contains), trimmed.first!.isLetter else {
            throw StoreError(.invalid, "An operator's name starts with a letter and holds only letters, digits, '.', '_' and '-', e.g. ada.l.",
                             field: "name")
        }
        return trimmed
    }
}
