import Foundation
import RetroRapidDomain
import RetroRapidSQL

/// Promo codes on PostgreSQL: the operator creates, lists and disables them; players redeem
/// them. New codes and redemptions are checked by the domain (``PromoCode``) first.
///
/// How each rule stays exact with many nodes writing at once (READ COMMITTED):
/// * the cap across players is one conditional UPDATE, `redemption_count + 1 … WHERE
///   disabled_at IS NULL AND (max_redemptions IS NULL OR redemption_count < max_redemptions)`:
///   concurrent redeemers queue on the code's row lock and PostgreSQL re-checks the WHERE on
///   the row each finds after waiting, so exactly the cap succeed; the table's CHECK refuses
///   an over-cap count whatever the code. A refused UPDATE reads the row again to say why
///   (withdrawn meanwhile, or fully redeemed);
/// * one player's redemptions (and the payments that grant the same entitlement, in
///   ``PostgresOrderRepository``) lock the player's row first, so "redeemed once" and
///   "already has unlimited play" are read where no concurrent write of theirs can change
///   them; `UNIQUE (code_id, player_id)` backs the first;
/// * the count, the redemption row and an unlock's entitlement commit in one transaction;
/// * a new code is one `INSERT … ON CONFLICT (code) DO NOTHING`: of two operators creating
///   one code at once, one gets the conflict.
public struct PostgresCodeRepository: CodeRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    @discardableResult
    public func create(code: String, kind: PromoCode.Kind, startsAt: Date? = nil, expiresAt: Date? = nil,
                       maxRedemptions: Int? = nil, now: Date) throws -> PromoCode {
        let (normalised, price) = try PromoCode.validatedNew(code: code, kind: kind, startsAt: startsAt, expiresAt: expiresAt,
                                                             maxRedemptions: maxRedemptions, now: now)
        guard let row = try connection.execute("""
            INSERT INTO promo_codes (code, kind, price_minor, currency, starts_at, expires_at, max_redemptions, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (code) DO NOTHING
            RETURNING \(Self.columns)
            """, [normalised, kind.name, price?.minorUnits, price?.currency, startsAt.map(UTCCivilTime.text),
                  expiresAt.map(UTCCivilTime.text), maxRedemptions, UTCCivilTime.text(now)]).first
        else { throw PromoCode.duplicate(normalised) }
        return try Self.decode(row).code
    }

    public func list() throws -> [PromoCode] {
        try connection.execute("SELECT \(Self.columns) FROM promo_codes ORDER BY created_at, id").map { try Self.decode($0).code }
    }

    public func code(_ code: String) throws -> PromoCode {
        let normalised = try PromoCode.normalise(code)
        guard let row = try Self.row(code: normalised, in: connection) else { throw PromoCode.unknown(normalised) }
        return row.code
    }

    @discardableResult
    public func disable(code: String, now: Date) throws -> PromoCode {
        let normalised = try PromoCode.normalise(code)
        return try connection.transaction { db in
            try db.execute("UPDATE promo_codes SET disabled_at = $1 WHERE code = $2 AND disabled_at IS NULL",
                           [UTCCivilTime.text(now), normalised])
            guard let row = try Self.row(code: normalised, in: db) else { throw PromoCode.unknown(normalised) }
            return row.code
        }
    }

    @discardableResult
    public func redeem(code: String, playerID: Int64, now: Date) throws -> Redemption {
        let normalised = try PromoCode.normalise(code)
        return try connection.transaction { db in
            guard let row = try Self.row(code: normalised, in: db) else { throw PromoCode.unknown(normalised) }
            try SQLPlayerLookup.requirePlayer(playerID, in: db, lockingRow: true)
            let promo = row.code
            if let earlier = try db.execute("SELECT redeemed_at FROM code_redemptions WHERE code_id = $1 AND player_id = $2",
                                            [row.id, playerID]).first {
                return Redemption(code: promo.code, kind: promo.kind, playerID: playerID,
                                  redeemedAt: try UTCCivilTime.storedDate(earlier.string(at: 0), column: "code_redemptions.redeemed_at"),
                                  expiresAt: promo.expiresAt)
            }
            if let refusal = promo.redemptionRefusal(at: now) { throw refusal }
            if try SQLEntitlementRepository.unlimited(playerID: playerID, in: db) != nil {
                throw PromoCode.alreadyUnlimited(promo.code)
            }
            // The write that counts is the one that checks: re-evaluated on the newest row.
            let counted = try db.execute("""
                UPDATE promo_codes SET redemption_count = redemption_count + 1
                WHERE id = $1 AND disabled_at IS NULL AND (max_redemptions IS NULL OR redemption_count < max_redemptions)
                """, [row.id])
            guard counted.affectedRows == 1 else {
                let why = try Self.row(code: normalised, in: db)?.code.redemptionRefusal(at: now)
                throw why ?? PromoCode.fullyRedeemed(promo.code)
            }
            let redeemedAt = UTCCivilTime.text(now)
            try db.execute("INSERT INTO code_redemptions (code_id, player_id, redeemed_at) VALUES ($1, $2, $3)",
                           [row.id, playerID, redeemedAt])
            if promo.kind == .unlock {
                _ = try SQLEntitlementRepository.grant(playerID: playerID, source: .code, reference: promo.code, now: now, in: db)
            }
            return Redemption(code: promo.code, kind: promo.kind, playerID: playerID,
                              redeemedAt: try UTCCivilTime.storedDate(redeemedAt, column: "code_redemptions.redeemed_at"),
                              expiresAt: promo.expiresAt)
        }
    }

    public func redemptions(playerID: Int64) throws -> [Redemption] {
        try Self.redeemedCodes(playerID: playerID, in: connection).map { promo, redeemedAt in
            Redemption(code: promo.code, kind: promo.kind, playerID: playerID, redeemedAt: redeemedAt, expiresAt: promo.expiresAt)
        }
    }

    // MARK: - Rows

    static let columns = "id, code, kind, price_minor, currency, starts_at, expires_at, max_redemptions, redemption_count, disabled_at, created_at"

    static func row(code: String, in db: PostgresConnection) throws -> (id: Int64, code: PromoCode)? {
        try db.execute("SELECT \(columns) FROM promo_codes WHERE code = $1", [code]).first.map(decode)
    }

    /// The codes a player redeemed, with when, oldest first.
    static func redeemedCodes(playerID: Int64, in db: PostgresConnection) throws -> [(code: PromoCode, redeemedAt: Date)] {
        let prefixed = columns.split(separator: ",").map { "c." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try db.execute("""
            SELECT \(prefixed), r.redeemed_at FROM code_redemptions r JOIN promo_codes c ON c.id = r.code_id
            WHERE r.player_id = $1 ORDER BY r.redeemed_at, r.id
            """, [playerID]).map { row in
            (try decode(row).code, try UTCCivilTime.storedDate(row.string(at: 11), column: "code_redemptions.redeemed_at"))
        }
    }

    /// A row of ``columns``.
    static func decode(_ row: PostgresRow) throws -> (id: Int64, code: PromoCode) {
        func optionalDate(_ column: Int, _ name: String) throws -> Date? {
            try row.optionalString(at: column).map { try UTCCivilTime.storedDate($0, column: "promo_codes.\(name)") }
        }
        let kind: PromoCode.Kind
        switch row.string(at: 2) {
        case "discount": kind = .discount(Money(minorUnits: row.int64(at: 3), currency: row.string(at: 4)))
        case "unlock": kind = .unlock
        case let other: throw StoreError.unreadable("promo_codes.kind holds unknown '\(other)'")
        }
        let code = PromoCode(
            code: row.string(at: 1), kind: kind,
            startsAt: try optionalDate(5, "starts_at"), expiresAt: try optionalDate(6, "expires_at"),
            maxRedemptions: row.optionalInt64(at: 7).map(Int.init), redemptions: row.int(at: 8),
            disabledAt: try optionalDate(9, "disabled_at"),
            createdAt: try UTCCivilTime.storedDate(row.string(at: 10), column: "promo_codes.created_at"))
        return (row.int64(at: 0), code)
    }
}
