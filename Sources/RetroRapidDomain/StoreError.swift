/// A refusal by a repository: bad input, or a state that forbids the request. Every
/// repository throws this (and its backend's own error only for real failures of the store), so
/// the server maps one type to HTTP statuses and WebSocket errors. A struct over a
/// code rather than an enum, so adding a code breaks no caller's `switch`.
/// A refused request changes nothing: repositories throw before or inside the
/// transaction that would have written.
public struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { rawValue }

        /// The thing named does not exist (404).
        public static let notFound = Code(rawValue: "not_found")
        /// A field is malformed or out of range (400).
        public static let invalid = Code(rawValue: "invalid")
        /// The token or device is unknown or revoked (401).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// Allowed in general, not for this player now, e.g. no plays left today (403).
        public static let forbidden = Code(rawValue: "forbidden")
        /// Clashes with what is stored, e.g. an order already paid (409).
        public static let conflict = Code(rawValue: "conflict")
        /// Was valid and no longer is: an expired or used link code or promo code (410).
        public static let expired = Code(rawValue: "expired")
        /// A write based on a version that is no longer current (412).
        public static let stale = Code(rawValue: "stale")
        /// Too many requests of this kind for now (429).
        public static let rateLimited = Code(rawValue: "rate_limited")
    }

    public let code: Code
    /// Says what was wrong and what to do, in words a player or operator can act on.
    public let message: String
    /// The field at fault, when there is one (e.g. "displayName", "settings.volume").
    public let field: String?

    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String {
        field.map { "\(code): \($0): \(message)" } ?? "\(code): \(message)"
    }
}

extension StoreError.Code {
    /// What is stored cannot be read back as a domain value (an unknown kind or status, a
    /// malformed time, a row gone right after it was written): damage or a newer build's data,
    /// not the caller's mistake. The server answers it as the internal failure it is (500),
    /// never as a refusal.
    public static let unreadable = StoreError.Code(rawValue: "unreadable")
}

extension StoreError {
    /// The one refusal for a player id or public id that names nobody, in every repository.
    public static func unknownPlayer(field: String) -> StoreError {
        StoreError(.notFound, "No player has this id.", field: field)
    }

    /// A stored value this build cannot read; see ``Code/unreadable``.
    public static func unreadable(_ message: String) -> StoreError {
        StoreError(.unreadable, message)
    }

    /// True when the request was refused (the caller can act on it); false for ``Code/unreadable``,
    /// which is the store failing.
    public var isRefusal: Bool { code != .unreadable }
}
