import Foundation
import RetroRapidDomain
import RetroRapidSQL

/// Promo codes: the operator creates, lists and disables them; players redeem them.
///
/// Redeeming runs in one IMMEDIATE transaction: the checks, the capped increment of
/// `promo_codes.redemption_count`, the `code_redemptions` row and (for an unlock code) the
/// entitlement commit together or not at all. SQLite's write lock serialises redemptions, so a
/// cap is exact under any number of concurrent players, and the table's CHECK refuses a count
/// over the cap even if some other code path tried.
///
/// Used from one thread at a time, like its ``Database``.
public struct SQLiteCodeRepository: CodeRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }

    /// Creates a code. The code is normalised first (see ``PromoCode/normalise(_:)``).
    ///
    /// - Throws: `.invalid` for a malformed code, a bad price or currency, a start not before
    ///   the expiry, an expiry already past at `now`, or a cap below 1; `.conflict` when the code
    ///   exists (even disabled: a code is never reused).
    @discardableResult
    public func create(
        code: String,
        kind: PromoCode.Kind,
        startsAt: Date? = nil,
        expiresAt: Date? = nil,
        maxRedemptions: Int? = nil,
        now: Date
    ) throws -> PromoCode {
        let (normalised, price) = try PromoCode.validatedNew(code: code, kind: kind, startsAt: startsAt, expiresAt: expiresAt,
                                                             maxRedemptions: maxRedemptions, now: now)
        return try database.transaction(.immediate) { db in
            guard try Self.row(code: normalised, in: db) == nil else {
                throw PromoCode.duplicate(normalised)
            }
            try db.prepare("""
                INSERT INTO promo_codes (code, kind, price_minor, currency, starts_at, expires_at, max_redemptions, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).execute([
                    normalised, kind.name, price?.minorUnits, price?.currency,
                    startsAt.map(UTCCivilTime.text), expiresAt.map(UTCCivilTime.text), maxRedemptions,
                    UTCCivilTime.text(now),
                ])
            guard let created = try Self.row(code: normalised, in: db) else {
                throw StoreError.unreadable("promo code \(normalised) vanished right after it was inserted")
            }
            return created.code
        }
    }

    /// Every code, oldest first.
    public func list() throws -> [PromoCode] {
        try database.prepare("SELECT \(Self.columns) FROM promo_codes ORDER BY created_at, id")
            .query { try Self.decode($0).code }
    }

    /// One code by any spelling of it. `.invalid` when malformed, `.notFound` when unknown.
    public func code(_ code: String) throws -> PromoCode {
        let normalised = try PromoCode.normalise(code)
        guard let row = try Self.row(code: normalised, in: database) else {
            throw PromoCode.unknown(normalised)
        }
        return row.code
    }

    /// Disables a code for good: it can no longer be redeemed and its discount stops applying.
    /// Disabling a disabled code changes nothing. `.notFound` when unknown.
    @discardableResult
    public func disable(code: String, now: Date) throws -> PromoCode {
        let normalised = try PromoCode.normalise(code)
        return try database.transaction(.immediate) { db in
            guard try Self.row(code: normalised, in: db) != nil else { throw PromoCode.unknown(normalised) }
            try db.prepare("UPDATE promo_codes SET disabled_at = ? WHERE code = ? AND disabled_at IS NULL")
                .execute([UTCCivilTime.text(now), normalised])
            guard let row = try Self.row(code: normalised, in: db) else { throw PromoCode.unknown(normalised) }
            return row.code
        }
    }

    /// Redeems a code for a player.
    ///
    /// A player redeems a code once: a repeat returns the first ``Redemption`` (whatever has
    /// happened to the code since) and counts nothing. An unlock code grants unlimited play in
    /// the same transaction. Every refusal changes nothing.
    ///
    /// - Throws: `.invalid` for a malformed code; `.notFound` for an unknown code or player;
    ///   `.expired` when the code is disabled, not started, expired, or fully redeemed;
    ///   `.conflict` when the player already has unlimited play (the code is kept for others).
    @discardableResult
    public func redeem(code: String, playerID: Int64, now: Date) throws -> Redemption {
        let normalised = try PromoCode.normalise(code)
        return try database.transaction(.immediate) { db in
            guard let row = try Self.row(code: normalised, in: db) else { throw PromoCode.unknown(normalised) }
            try SQLPlayerLookup.requirePlayer(playerID, in: statements)
            let promo = row.code

            let earlier = try db.prepare("SELECT redeemed_at FROM code_redemptions WHERE code_id = ? AND player_id = ?")
                .query([row.id, playerID]) { $0.string(at: 0) }
            if let redeemedAt = earlier.first {
                return Redemption(
                    code: promo.code, kind: promo.kind, playerID: playerID,
                    redeemedAt: try UTCCivilTime.storedDate(redeemedAt, column: "code_redemptions.redeemed_at"),
                    expiresAt: promo.expiresAt
                )
            }
            if let refusal = promo.redemptionRefusal(at: now) { throw refusal }
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: statements) != nil {
                throw PromoCode.alreadyUnlimited(promo.code)
            }

            // The cap again, in the UPDATE itself: the write that counts is the one that checks.
            try db.prepare("""
                UPDATE promo_codes SET redemption_count = redemption_count + 1
                WHERE id = ? AND (max_redemptions IS NULL OR redemption_count < max_redemptions)
                """).execute([row.id])
            guard db.changes == 1 else { throw PromoCode.fullyRedeemed(promo.code) }
            let redeemedAt = UTCCivilTime.text(now)
            try db.prepare("INSERT INTO code_redemptions (code_id, player_id, redeemed_at) VALUES (?, ?, ?)")
                .execute([row.id, playerID, redeemedAt])
            if promo.kind == .unlock {
                _ = try SQLEntitlementRepository.grant(playerID: playerID, source: .code, reference: promo.code, now: now, in: statements)
            }
            return Redemption(
                code: promo.code, kind: promo.kind, playerID: playerID,
                redeemedAt: try UTCCivilTime.storedDate(redeemedAt, column: "code_redemptions.redeemed_at"),
                expiresAt: promo.expiresAt
            )
        }
    }

    /// The player's redemptions, oldest first.
    public func redemptions(playerID: Int64) throws -> [Redemption] {
        try Self.redeemedCodes(playerID: playerID, in: database).map { promo, redeemedAt in
            Redemption(code: promo.code, kind: promo.kind, playerID: playerID, redeemedAt: redeemedAt, expiresAt: promo.expiresAt)
        }
    }

    // MARK: - Rows

    static let columns = "id, code, kind, price_minor, currency, starts_at, expires_at, max_redemptions, redemption_count, disabled_at, created_at"

    static func row(code: String, in db: Database) throws -> (id: Int64, code: PromoCode)? {
        try db.prepare("SELECT \(columns) FROM promo_codes WHERE code = ?").query([code], decode).first
    }

    /// The codes a player redeemed, with when, oldest first.
    static func redeemedCodes(playerID: Int64, in db: Database) throws -> [(code: PromoCode, redeemedAt: Date)] {
        let prefixed = columns.split(separator: ",").map { "c." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try db.prepare("""
            SELECT \(prefixed), r.redeemed_at FROM code_redemptions r JOIN promo_codes c ON c.id = r.code_id
            WHERE r.player_id = ? ORDER BY r.redeemed_at, r.id
            """).query([playerID]) { row in
                (try decode(row).code, try UTCCivilTime.storedDate(row.string(at: 11), column: "code_redemptions.redeemed_at"))
            }
    }

    /// A row of ``columns``.
    static func decode(_ row: Statement) throws -> (id: Int64, code: PromoCode) {
        func optionalDate(_ column: Int, _ name: String) throws -> Date? {
            row.isNull(at: column) ? nil : try UTCCivilTime.storedDate(row.string(at: column), column: "promo_codes.\(name)")
        }
        let kind: PromoCode.Kind
        switch row.string(at: 2) {
        case "discount": kind = .discount(Money(minorUnits: row.int64(at: 3), currency: row.string(at: 4)))
        case "unlock": kind = .unlock
        case let other: throw StoreError.unreadable("promo_codes.kind holds unknown '\(other)'")
        }
        let code = PromoCode(
            code: row.string(at: 1),
            kind: kind,
            startsAt: try optionalDate(5, "starts_at"),
            expiresAt: try optionalDate(6, "expires_at"),
            maxRedemptions: row.isNull(at: 7) ? nil : row.int(at: 7),
            redemptions: row.int(at: 8),
            disabledAt: try optionalDate(9, "disabled_at"),
            createdAt: try UTCCivilTime.storedDate(row.string(at: 10), column: "promo_codes.created_at")
        )
        return (row.int64(at: 0), code)
    }
}
