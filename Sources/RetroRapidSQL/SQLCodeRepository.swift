import Foundation
import RetroRapidDomain

/// Promo codes, on either backend: the operator creates, lists and disables them; players
/// redeem them. New codes and redemptions are checked by the domain (``PromoCode``) first.
///
/// How each rule stays exact with many writers at once (on SQLite the one write lock
/// serialises every redemption; on PostgreSQL, at READ COMMITTED, the following do):
/// * the cap across players is one conditional UPDATE, `redemption_count + 1 … WHERE
///   disabled_at IS NULL AND (max_redemptions IS NULL OR redemption_count < max_redemptions)`:
///   concurrent redeemers queue on the code's row lock and PostgreSQL re-checks the WHERE on
///   the row each finds after waiting, so exactly the cap succeed; the table's CHECK refuses
///   an over-cap count whatever the code. A refused UPDATE reads the row again to say why
///   (withdrawn meanwhile, or fully redeemed);
/// * one player's redemptions (and the payments that grant the same entitlement) lock the
///   player's row first, so "redeemed once" and "already has unlimited play" are read where
///   no concurrent write of theirs can change them; `UNIQUE (code_id, player_id)` backs the
///   first;
/// * the count, the redemption row and an unlock's entitlement commit in one transaction;
/// * a new code is one `INSERT … ON CONFLICT (code) DO NOTHING`: of two operators creating
///   one code at once, one gets the conflict (a code is never reused, even disabled).
public struct SQLCodeRepository: CodeRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// Creates a code. The code is normalised first (see ``PromoCode/normalise(_:)``).
    ///
    /// - Throws: `.invalid` for a malformed code, a bad price or currency, a start not before
    ///   the expiry, an expiry already past at `now`, or a cap below 1; `.conflict` when the code
    ///   exists (even disabled: a code is never reused).
    @discardableResult
    public func create(code: String, kind: PromoCode.Kind, startsAt: Date? = nil, expiresAt: Date? = nil,
                       maxRedemptions: Int? = nil, now: Date) throws -> PromoCode {
        let (normalised, price) = try PromoCode.validatedNew(code: code, kind: kind, startsAt: startsAt, expiresAt: expiresAt,
                                                             maxRedemptions: maxRedemptions, now: now)
        guard let row = try executor.query("""
            INSERT INTO promo_codes (code, kind, price_minor, currency, starts_at, expires_at, max_redemptions, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (code) DO NOTHING
            RETURNING \(Self.columns)
            """, [normalised, kind.name, price?.minorUnits, price?.currency, startsAt.map(UTCCivilTime.text),
                  expiresAt.map(UTCCivilTime.text), maxRedemptions, UTCCivilTime.text(now)]).first
        else { throw PromoCode.duplicate(normalised) }
        return try Self.decode(row).code
    }

    /// Every code, oldest first.
    public func list() throws -> [PromoCode] {
        try executor.query("SELECT \(Self.columns) FROM promo_codes ORDER BY created_at, id", []).rows.map { try Self.decode($0).code }
    }

    /// One code by any spelling of it. `.invalid` when malformed, `.notFound` when unknown.
    public func code(_ code: String) throws -> PromoCode {
        let normalised = try PromoCode.normalise(code)
        guard let row = try Self.row(code: normalised, in: executor) else { throw PromoCode.unknown(normalised) }
        return row.code
    }

    /// Disables a code for good: it can no longer be redeemed and its discount stops applying.
    /// Disabling a disabled code changes nothing. `.notFound` when unknown.
    @discardableResult
    public func disable(code: String, now: Date) throws -> PromoCode {
        let normalised = try PromoCode.normalise(code)
        return try executor.writeTransaction {
            try executor.query("UPDATE promo_codes SET disabled_at = $1 WHERE code = $2 AND disabled_at IS NULL",
                               [UTCCivilTime.text(now), normalised])
            guard let row = try Self.row(code: normalised, in: executor) else { throw PromoCode.unknown(normalised) }
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
        return try executor.writeTransaction {
            guard let row = try Self.row(code: normalised, in: executor) else { throw PromoCode.unknown(normalised) }
            try SQLPlayerLookup.requirePlayer(playerID, in: executor, lockingRow: true)
            let promo = row.code
            if let earlier = try executor.query("SELECT redeemed_at FROM code_redemptions WHERE code_id = $1 AND player_id = $2",
                                                [row.id, playerID]).first {
                return Redemption(code: promo.code, kind: promo.kind, playerID: playerID,
                                  redeemedAt: try UTCCivilTime.storedDate(earlier.string("redeemed_at"), column: "code_redemptions.redeemed_at"),
                                  expiresAt: promo.expiresAt)
            }
            if let refusal = promo.redemptionRefusal(at: now) { throw refusal }
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: executor) != nil {
                throw PromoCode.alreadyUnlimited(promo.code)
            }
            // The write that counts is the one that checks: re-evaluated on the newest row.
            let counted = try executor.query("""
                UPDATE promo_codes SET redemption_count = redemption_count + 1
                WHERE id = $1 AND disabled_at IS NULL AND (max_redemptions IS NULL OR redemption_count < max_redemptions)
                """, [row.id])
            guard counted.affectedRows == 1 else {
                let why = try Self.row(code: normalised, in: executor)?.code.redemptionRefusal(at: now)
                throw why ?? PromoCode.fullyRedeemed(promo.code)
            }
            let redeemedAt = UTCCivilTime.text(now)
            try executor.query("INSERT INTO code_redemptions (code_id, player_id, redeemed_at) VALUES ($1, $2, $3)",
                               [row.id, playerID, redeemedAt])
            if promo.kind == .unlock {
                _ = try SQLEntitlementRepository.grant(playerID: playerID, source: .code, reference: promo.code, now: now, in: executor)
            }
            return Redemption(code: promo.code, kind: promo.kind, playerID: playerID,
                              redeemedAt: try UTCCivilTime.storedDate(redeemedAt, column: "code_redemptions.redeemed_at"),
                              expiresAt: promo.expiresAt)
        }
    }

    /// The player's redemptions, oldest first.
    public func redemptions(playerID: Int64) throws -> [Redemption] {
        try Self.redeemedCodes(playerID: playerID, in: executor).map { promo, redeemedAt in
            Redemption(code: promo.code, kind: promo.kind, playerID: playerID, redeemedAt: redeemedAt, expiresAt: promo.expiresAt)
        }
    }

    // MARK: - Rows

    static let columns = "id, code, kind, price_minor, currency, starts_at, expires_at, max_redemptions, redemption_count, disabled_at, created_at"

    static func row(code: String, in db: any SQLExecutor) throws -> (id: Int64, code: PromoCode)? {
        try db.query("SELECT \(columns) FROM promo_codes WHERE code = $1", [code]).first.map(decode)
    }

    /// The codes a player redeemed, with when, oldest first.
    public static func redeemedCodes(playerID: Int64, in db: any SQLExecutor) throws -> [(code: PromoCode, redeemedAt: Date)] {
        let prefixed = columns.split(separator: ",").map { "c." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try db.query("""
            SELECT \(prefixed), r.redeemed_at FROM code_redemptions r JOIN promo_codes c ON c.id = r.code_id
            WHERE r.player_id = $1 ORDER BY r.redeemed_at, r.id
            """, [playerID]).rows.map { row in
            (try decode(row).code, try UTCCivilTime.storedDate(row.string("redeemed_at"), column: "code_redemptions.redeemed_at"))
        }
    }

    /// A row of ``columns``.
    static func decode(_ row: SQLRow) throws -> (id: Int64, code: PromoCode) {
        func optionalDate(_ name: String) throws -> Date? {
            try row.optionalString(name).map { try UTCCivilTime.storedDate($0, column: "promo_codes.\(name)") }
        }
        let kind: PromoCode.Kind
        switch try row.string("kind") {
        case "discount": kind = .discount(Money(minorUnits: try row.int64("price_minor"), currency: try row.string("currency")))
        case "unlock": kind = .unlock
        case let other: throw StoreError.unreadable("promo_codes.kind holds unknown '\(other)'")
        }
        let code = PromoCode(
            code: try row.string("code"), kind: kind,
            startsAt: try optionalDate("starts_at"), expiresAt: try optionalDate("expires_at"),
            maxRedemptions: try row.optionalInt64("max_redemptions").map(Int.init), redemptions: try row.int("redemption_count"),
            disabledAt: try optionalDate("disabled_at"),
            createdAt: try UTCCivilTime.storedDate(row.string("created_at"), column: "promo_codes.created_at"))
        return (try row.int64("id"), code)
    }
}
