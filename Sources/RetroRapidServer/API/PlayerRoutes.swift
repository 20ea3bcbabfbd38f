import Foundation
import RetroRapidDomain

/// Players and their devices (docs/API.md, "Players and devices"): creating a player,
/// link codes for a second device, the device list, the signed-in player ("me") and today's
/// free plays. Every route but creation and claiming needs `Authorization: Bearer <token>`.
enum PlayerRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.post, "/api/v1/players") { request, responder in createPlayer(request, responder, api) }
        router.add(.get, "/api/v1/me") { request, responder in me(request, responder, api) }
        router.add(.patch, "/api/v1/me") { request, responder in updateMe(request, responder, api) }
        router.add(.get, "/api/v1/quota") { request, responder in quota(request, responder, api) }
        router.add(.get, "/api/v1/devices") { request, responder in devices(request, responder, api) }
        router.add(.delete, "/api/v1/devices/{id}") { request, responder in revokeDevice(request, responder, api) }
        router.add(.post, "/api/v1/link-codes") { request, responder in createLinkCode(request, responder, api) }
        router.add(.post, "/api/v1/link-codes/claim") { request, responder in claimLinkCode(request, responder, api) }
    }

    // MARK: - Bodies

    struct NewPlayerBody: APIRequestBody {
        static let fields = ["displayName", "deviceLabel"]
        var displayName: String?
        var deviceLabel: String?
    }

    struct MeUpdateBody: APIRequestBody {
        static let fields = ["displayName"]
        var displayName: String
    }

    struct ClaimBody: APIRequestBody {
        static let fields = ["code", "deviceLabel"]
        var code: String
        var deviceLabel: String?
    }

    struct EmptyBody: APIRequestBody {
        static let fields: [String] = []
    }

    // MARK: - Answers

    struct PlayerJSON: Encodable {
        /// The public id: never the row id.
        var id: String
        var displayName: String
        var createdAt: Date

        init(_ player: Player) {
            id = player.publicID
            displayName = player.displayName
            createdAt = player.createdAt
        }
    }

    /// The one answer that carries a device token: it is never shown again.
    struct SignedInJSON: Encodable {
        var player: PlayerJSON
        var token: String
    }

    struct EntitlementsJSON: Encodable {
        var unlimited: Bool
        /// `code`, `order` or `operator`; absent without unlimited play.
        var unlimitedSource: String?
        var unlimitedSince: Date?

        init(_ entitlement: UnlimitedEntitlement?) {
            unlimited = entitlement != nil
            unlimitedSource = entitlement?.source.rawValue
            unlimitedSince = entitlement?.grantedAt
        }
    }

    struct MeJSON: Encodable {
        var player: PlayerJSON
        /// The id of the device asking, as in the device list.
        var deviceId: Int64
        var entitlements: EntitlementsJSON
    }

    struct DeviceJSON: Encodable {
        var id: Int64
        var label: String
        var createdAt: Date
        var lastSeenAt: Date?
        var revokedAt: Date?
        var current: Bool

        init(_ device: Device) {
            id = device.id
            label = device.label
            createdAt = device.createdAt
            lastSeenAt = device.lastSeenAt
            revokedAt = device.revokedAt
            current = device.isCurrent
        }
    }

    struct DevicesJSON: Encodable {
        var devices: [DeviceJSON]
    }

    struct LinkCodeJSON: Encodable {
        var code: String
        var expiresAt: Date
    }

    // MARK: - Handlers

    /// POST /api/v1/players: a new player and their first device token. Limited per client
    /// address and for the whole server, every creation counted (a valid body is needed to
    /// count).
    static func createPlayer(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let body: NewPlayerBody
        let address = api.addressKey(request)
        do {
            body = try APIJSON.decode(NewPlayerBody.self, from: request)
            // This process's memory first: an address over its limit costs no database job.
            if let refusal = api.rateLimits.playerCreationRefusal(addressKey: address) { throw refusal }
        } catch {
            return responder.respond(APIError(error).response)
        }
        let rateLimits = api.rateLimits
        api.run(responder) { storage, now in
            try rateLimits.takePlayerCreation(addressKey: address, in: storage.rateLimits, now: now)
            let created = try storage.players.createPlayer(displayName: body.displayName, deviceLabel: body.deviceLabel ?? "", now: now)
            return try APIJSON.response(SignedInJSON(player: PlayerJSON(created.player), token: created.token), status: 201)
        }
    }

    /// GET /api/v1/me: the signed-in player and what they are entitled to.
    static func me(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder) { storage, device, _ in
            try APIJSON.response(meJSON(storage, device.player, deviceID: device.deviceID))
        }
    }

    /// PATCH /api/v1/me: change the display name.
    static func updateMe(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder, body: MeUpdateBody.self) { storage, device, _, body in
            let player = try storage.players.setDisplayName(playerID: device.player.id, name: body.displayName)
            return try APIJSON.response(meJSON(storage, player, deviceID: device.deviceID))
        }
    }

    private static func meJSON(_ storage: StorageContext, _ player: Player, deviceID: Int64) throws -> MeJSON {
        MeJSON(player: PlayerJSON(player), deviceId: deviceID,
               entitlements: EntitlementsJSON(try storage.entitlements.unlimited(playerID: player.id)))
    }

    /// GET /api/v1/quota: free plays left today and when they reset.
    static func quota(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder) { storage, device, now in
            try APIJSON.response(QuotaJSON(storage.quota.status(playerID: device.player.id, now: now)))
        }
    }

    /// GET /api/v1/devices: every device of the player, revoked ones marked.
    static func devices(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder) { storage, device, _ in
            let list = try storage.players.devices(playerID: device.player.id, currentDeviceID: device.deviceID)
            return try APIJSON.response(DevicesJSON(devices: list.map(DeviceJSON.init)))
        }
    }

    /// DELETE /api/v1/devices/{id}: signs a device out for good; answers with the new list.
    static func revokeDevice(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let deviceID: Int64
        do {
            _ = try APIServices.bearerToken(request)  // 401 before anything else
            deviceID = try APIServices.integerParameter(request, "id")
        } catch {
            return responder.respond(error.response)
        }
        let events = api.events
        // Once revoked, the device's open game connections are closed too (a leaked token
        // must stop working everywhere at once, not only at its next sign-in).
        api.runSignedIn(request, responder, publishing: { (revoked: (playerID: Int64, deviceID: Int64)) in
            events.publishDeviceRevoked(playerID: revoked.playerID, deviceID: revoked.deviceID)
        }) { storage, device, now in
            try storage.players.revokeDevice(playerID: device.player.id, deviceID: deviceID, now: now)
            let list = try storage.players.devices(playerID: device.player.id, currentDeviceID: device.deviceID)
            return (try APIJSON.response(DevicesJSON(devices: list.map(DeviceJSON.init))), (device.player.id, deviceID))
        }
    }

    /// POST /api/v1/link-codes: a short single-use code another device can claim.
    static func createLinkCode(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder, body: EmptyBody.self, required: false) { storage, device, now, _ in
            do {
                let issued = try storage.linkCodes.createCode(for: device, now: now)
                return try APIJSON.response(LinkCodeJSON(code: issued.code, expiresAt: issued.expiresAt), status: 201)
            } catch let error as StoreError where error.code == .rateLimited {
                let wait = try storage.linkCodes.retryAfter(playerID: device.player.id, now: now) ?? 1
                throw APIError.rateLimited(error.message, retryAfter: Int(wait.rounded(.up)))
            }
        }
    }

    /// POST /api/v1/link-codes/claim: joins this device to the player who created the code.
    /// Failed claims are limited per client address, since a code is short enough to be worth
    /// guessing otherwise; a claim that joins a device costs nothing.
    static func claimLinkCode(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        let body: ClaimBody
        let address = api.addressKey(request)
        do {
            body = try APIJSON.decode(ClaimBody.self, from: request, required: true)
            if let refusal = api.rateLimits.refusal(.linkCodeClaim, .address, key: address) { throw refusal }
        } catch {
            return responder.respond(APIError(error).response)
        }
        let rateLimits = api.rateLimits
        api.run(responder) { storage, now in
            let claimed = try rateLimits.guarded(.linkCodeClaim, [(.address, address)], counts: RateLimits.isFailedCodeGuess,
                                                 in: storage.rateLimits, now: now) {
                try storage.linkCodes.claim(code: body.code, deviceLabel: body.deviceLabel ?? "", now: now)
            }
            return try APIJSON.response(SignedInJSON(player: PlayerJSON(claimed.player), token: claimed.token), status: 201)
        }
    }
}
