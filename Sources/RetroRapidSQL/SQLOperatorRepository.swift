import Foundation
import RetroRapidDomain

/// The operators' accounts, on either backend (``OperatorRepository``). A new account is one
/// `INSERT … ON CONFLICT (name) DO NOTHING`, so of two operators adding one name at once one
/// gets the conflict; a disable or a reset is one conditional UPDATE, read back in the same
/// transaction.
///
/// Threading rule: as its executor, one thread at a time.
public struct SQLOperatorRepository: OperatorRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    @discardableResult
    public func add(name: String, role: OperatorAccount.Role, passwordHash: String, now: Date) throws -> OperatorAccount {
        let name = try OperatorAccount.validatedName(name)
        try Self.requireHash(passwordHash)
        guard let row = try executor.query("""
            INSERT INTO operators (name, role, password_hash, created_at, password_set_at)
            VALUES ($1, $2, $3, $4, $4)
            ON CONFLICT (name) DO NOTHING
            RETURNING \(Self.columns)
            """, [name, role.rawValue, passwordHash, UTCCivilTime.text(now)]).first
        else {
            throw StoreError(.conflict, "There is already an operator named \(name) (a name is never reused, even once disabled).",
                             field: "name")
        }
        return try Self.account(row)
    }

    public func list() throws -> [OperatorAccount] {
        try executor.query("SELECT \(Self.columns) FROM operators ORDER BY created_at, id", []).rows.map(Self.account)
    }

    public func account(named name: String) throws -> (account: OperatorAccount, passwordHash: String) {
        let name = try OperatorAccount.validatedName(name)
        guard let row = try executor.query("SELECT \(Self.columns), password_hash FROM operators WHERE name = $1", [name]).first else {
            throw Self.unknown(name)
        }
        return (try Self.account(row), try row.string("password_hash"))
    }

    @discardableResult
    public func disable(name: String, now: Date) throws -> OperatorAccount {
        let name = try OperatorAccount.validatedName(name)
        return try executor.writeTransaction {
            try executor.query("UPDATE operators SET disabled_at = $1 WHERE name = $2 AND disabled_at IS NULL",
                               [UTCCivilTime.text(now), name])
            return try account(named: name).account
        }
    }

    @discardableResult
    public func resetPassword(name: String, passwordHash: String, now: Date) throws -> OperatorAccount {
        let name = try OperatorAccount.validatedName(name)
        try Self.requireHash(passwordHash)
        return try executor.writeTransaction {
            let changed = try executor.query("""
                UPDATE operators SET password_hash = $1, password_set_at = $2 WHERE name = $3 AND disabled_at IS NULL
                """, [passwordHash, UTCCivilTime.text(now), name]).affectedRows
            let account = try account(named: name).account
            guard changed == 1 else {
                throw StoreError(.conflict, "\(name) is disabled; a disabled operator stays disabled (add a new one).", field: "name")
            }
            return account
        }
    }

    static let columns = "id, name, role, created_at, password_set_at, disabled_at"

    static func unknown(_ name: String) -> StoreError {
        StoreError(.notFound, "No operator is named \(name).", field: "name")
    }

    /// A hash in the stored form, never a password in clear by mistake.
    static func requireHash(_ hash: String) throws {
        guard hash.hasPrefix("pbkdf2-sha256$"), hash.count <= 300 else {
            throw StoreError(.invalid, "Give the password's hash (OperatorPassword.hash), not the password.", field: "passwordHash")
        }
    }

    static func account(_ row: SQLRow) throws -> OperatorAccount {
        let name = try row.string("name")
        guard let role = OperatorAccount.Role(rawValue: try row.string("role")) else {
            throw StoreError.unreadable("operators row \(name) has a role this build cannot read")
        }
        return OperatorAccount(
            id: try row.int64("id"), name: name, role: role,
            createdAt: try UTCCivilTime.storedDate(row.string("created_at"), column: "operators.created_at"),
            passwordSetAt: try UTCCivilTime.storedDate(row.string("password_set_at"), column: "operators.password_set_at"),
            disabledAt: try row.optionalString("disabled_at").map { try UTCCivilTime.storedDate($0, column: "operators.disabled_at") })
    }
}
