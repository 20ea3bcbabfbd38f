import Foundation

/// The operators' accounts (docs/OPERATIONS.md, "Operator accounts"): kept apart from the
/// players, changed only by the operator CLI. A password is passed in already hashed
/// (``OperatorPassword/hash(_:iterations:)``); no repository ever sees one in clear.
/// Refusals are ``StoreError`` and change nothing.
public protocol OperatorRepository {
    /// - Throws: `StoreError(.invalid)` for a bad name or hash, `.conflict` when the name is taken
    ///   (by a disabled account too: a name is never reused, so the audit's "who" stays one person).
    @discardableResult
    func add(name: String, role: OperatorAccount.Role, passwordHash: String, now: Date) throws -> OperatorAccount

    /// Every account, oldest first.
    func list() throws -> [OperatorAccount]

    /// The account and its password hash, for signing in.
    /// - Throws: `StoreError(.notFound)`.
    func account(named name: String) throws -> (account: OperatorAccount, passwordHash: String)

    /// Disables the account for good; disabling it again changes nothing.
    /// - Throws: `StoreError(.notFound)`.
    @discardableResult
    func disable(name: String, now: Date) throws -> OperatorAccount

    /// Replaces the password of an account that is not disabled.
    /// - Throws: `StoreError(.notFound)`; `.conflict` for a disabled account.
    @discardableResult
    func resetPassword(name: String, passwordHash: String, now: Date) throws -> OperatorAccount
}
