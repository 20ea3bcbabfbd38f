import Foundation

/// One change an operator made (docs/OPERATIONS.md, "Audit log"): who, when, what, and the
/// state before and after, in words an operator reads. Never holds a secret.
public struct AuditEntry: Sendable, Equatable {
    public let id: Int64
    public let at: Date
    /// `cli:USER` (the system user who ran the command) or `console:NAME` (an operator account).
    public let actor: String
    /// The change, e.g. `codes.create`, `players.revoke-device`.
    public let action: String
    /// What it changed: a code, a player's public id, an order, an operator.
    public let subject: String
    public let before: String?
    public let after: String?

    public init(id: Int64, at: Date, actor: String, action: String, subject: String, before: String?, after: String?) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.subject = subject
        self.before = before
        self.after = after
    }

    /// The most an entry's text fields hold; longer text is cut, with an ellipsis, never refused:
    /// a change is never refused for the length of its description.
    package static let limits = (actor: 100, action: 60, subject: 200, state: 2000)

    /// `text` cut to `limit` characters.
    package static func clipped(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
