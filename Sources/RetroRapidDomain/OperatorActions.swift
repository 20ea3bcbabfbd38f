import Foundation

/// The changes an operator makes to players, codes and orders, written once for every way an
/// operator reaches them (the CLI, the console): each runs in one transaction with its audit
/// entry (``StorageConnection/audited(by:action:subject:now:repositories:_:)``), so the rule
/// and its record are never two copies. A change that changes nothing (a device revoked
/// twice) succeeds and writes no entry. Refusals are the repositories' `StoreError`s.
///
/// Threading: the thread that owns `connection` (the CLI's main thread, a storage thread).
public struct OperatorActions {
    /// Who the audit log names: `cli:USER` or `console:NAME`.
    public let actor: String
    private let connection: any StorageConnection
    private let repositories: StorageRepositories

    public init(actor: String, connection: any StorageConnection, repositories: StorageRepositories) {
        self.actor = actor
        self.connection = connection
        self.repositories = repositories
    }

    /// What a change found and left.
    public struct Change<Value> {
        public let before: Value
        public let after: Value
        /// False when the thing was already as asked (nothing written, no audit entry).
        public let changed: Bool
    }

    /// The longest note, in bytes, an operator may give with a payment (it is stored where the
    /// provider's event id would go, 255 bytes with its prefix).
    public static let maximumReasonLength = 240

    /// Grants `player` unlimited play, saying why (`reason`, which the entitlement keeps as its
    /// reference: ``UnlimitedEntitlement/validatedReference(_:)``).
    public func grantUnlimited(_ player: Player, reason: String, now: Date) throws -> Change<UnlimitedEntitlement?> {
        let entitlements = repositories.entitlements
        return try connection.audited(by: actor, action: "players.grant-unlimited", subject: player.publicID, now: now,
                                      repositories: repositories) {
            () -> (value: Change<UnlimitedEntitlement?>, before: String?, after: String?) in
            let before = try entitlements.unlimited(playerID: player.id)
            let after = try entitlements.grantUnlimited(playerID: player.id, source: .operator, reference: reason, now: now)
            let change = Change<UnlimitedEntitlement?>(before: before, after: after, changed: before == nil)
            guard before == nil else { return (change, nil, nil) }
            return (change, "no unlimited play", "unlimited play (\(after.source.rawValue): \(after.reference))")
        }
    }

    /// Signs one of `player`'s devices out for good, the last one too (a stolen only device).
    /// The caller closes its open game connections (the server's `PlayerEvents`).
    /// - Throws: `StoreError(.notFound, field: "deviceID")` when the player has no such device.
    public func revokeDevice(_ player: Player, deviceID: Int64, now: Date) throws -> Change<Device> {
        let players = repositories.players
        return try connection.audited(by: actor, action: "players.revoke-device", subject: player.publicID, now: now,
                                      repositories: repositories) { () -> (value: Change<Device>, before: String?, after: String?) in
            guard let before = try players.devices(playerID: player.id).first(where: { $0.id == deviceID }) else {
                throw StoreError(.notFound, "Player \(player.publicID) has no device \(deviceID).", field: "deviceID")
            }
            try players.revokeDevice(playerID: player.id, deviceID: deviceID, now: now, allowingLastDevice: true)
            let after = try players.devices(playerID: player.id).first(where: { $0.id == deviceID }) ?? before
            let change = Change(before: before, after: after, changed: before.revokedAt == nil)
            guard change.changed else { return (change, nil, nil) }
            let label = before.label.isEmpty ? "" : " (\(before.label))"
            return (change, "device \(deviceID)\(label) signed in",
                    "device \(deviceID)\(label) revoked at \(Self.timeText(now))")
        }
    }

    /// Renames `player` (an offensive display name), by ``DisplayName``'s rules.
    /// - Throws: `StoreError(.invalid, field: "displayName")`.
    public func rename(_ player: Player, to name: String, now: Date) throws -> Change<Player> {
        let players = repositories.players
        return try connection.audited(by: actor, action: "players.rename", subject: player.publicID, now: now,
                                      repositories: repositories) { () -> (value: Change<Player>, before: String?, after: String?) in
            let before = try players.player(id: player.id)
            let after = try players.setDisplayName(playerID: player.id, name: name)
            let change = Change(before: before, after: after, changed: before.displayName != after.displayName)
            guard change.changed else { return (change, nil, nil) }
            return (change, "display name \(before.displayName)", "display name \(after.displayName)")
        }
    }

    /// Marks an order paid, which grants its player unlimited play; the payment is recorded as
    /// "operator: REASON" where the provider's event id would go.
    public func markPaid(orderID: String, reason: String, now: Date) throws -> Change<Order> {
        let eventID = "operator: " + (try Self.checkedReason(reason))
        let orders = repositories.orders
        return try connection.audited(by: actor, action: "orders.mark-paid", subject: orderID, now: now,
                                      repositories: repositories) { () -> (value: Change<Order>, before: String?, after: String?) in
            let before = try orders.order(publicID: orderID)
            let after = try orders.markPaid(orderID: orderID, providerEventID: eventID, now: now)
            let change = Change(before: before, after: after, changed: before.status != .paid)
            guard change.changed else { return (change, nil, nil) }
            return (change, "\(before.status.rawValue), \(before.amount)", "paid (\(eventID)), \(after.amount)")
        }
    }

    /// Creates a promo code. The repository checks its shape, price, window and cap before it
    /// writes; how strong the code is, is the caller's question (``CodeStrength``), asked first.
    public func createCode(_ code: String, kind: PromoCode.Kind, startsAt: Date?, expiresAt: Date?, maxRedemptions: Int?,
                           now: Date) throws -> PromoCode {
        let codes = repositories.codes
        return try connection.audited(by: actor, action: "codes.create", subject: (try? PromoCode.normalise(code)) ?? code,
                                      now: now, repositories: repositories) { () -> (value: PromoCode, before: String?, after: String?) in
            let created = try codes.create(code: code, kind: kind, startsAt: startsAt, expiresAt: expiresAt,
                                           maxRedemptions: maxRedemptions, now: now)
            return (created, nil, "\(created.code): \(created.kindText), \(created.windowText), \(created.capText)")
        }
    }

    /// Disables a promo code: it redeems nothing from now on; its redemptions stand.
    public func disableCode(_ code: String, now: Date) throws -> Change<PromoCode> {
        let normalised = try PromoCode.normalise(code)
        let codes = repositories.codes
        return try connection.audited(by: actor, action: "codes.disable", subject: normalised, now: now,
                                      repositories: repositories) { () -> (value: Change<PromoCode>, before: String?, after: String?) in
            let before = try codes.code(code)
            let after = try codes.disable(code: code, now: now)
            let change = Change(before: before, after: after, changed: before.disabledAt == nil)
            guard change.changed else { return (change, nil, nil) }
            return (change, "\(before.status(at: now)), \(before.redemptions) redemptions",
                    "disabled at \(Self.timeText(after.disabledAt ?? now))")
        }
    }

    /// `reason` trimmed, or the refusal of an empty or overlong one.
    static func checkedReason(_ reason: String) throws -> String {
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= maximumReasonLength else {
            throw StoreError(.invalid, "Say why in 1 to \(maximumReasonLength) characters.", field: "reason")
        }
        return trimmed
    }

    /// `2026-01-15T10:23:45Z`: UTC, whole seconds, as the database keeps times.
    public static func timeText(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
    }
}
