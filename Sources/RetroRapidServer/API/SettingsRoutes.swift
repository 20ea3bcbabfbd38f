import Foundation
import RetroRapidDomain

/// The player's settings document (docs/API.md, "Settings").
///
/// GET answers `{"settings":{…},"updatedAt":…,"version":n}` with `ETag: "n"`. A write sends
/// `If-Match: "n"`, the version it was based on: PUT replaces the whole document (fields left
/// out take their defaults), PATCH changes only the fields it sends. A write based on another
/// version than the stored one is refused with 412 and the current document, so a change made
/// meanwhile on another device is never silently lost. A stored write is announced to the
/// WebSocket side, which pushes it to the player's other connected devices.
enum SettingsRoutes {
    static func add(to router: inout HTTPRouter, _ api: APIServices) {
        router.add(.get, "/api/v1/settings") { request, responder in read(request, responder, api) }
        router.add(.put, "/api/v1/settings") { request, responder in write(request, responder, api, patch: false) }
        router.add(.patch, "/api/v1/settings") { request, responder in write(request, responder, api, patch: true) }
    }

    /// The 412 body: the error shape plus the document as stored now.
    struct StaleJSON: Encodable {
        struct Detail: Encodable { var code: String; var message: String }
        var error: Detail
        var current: VersionedSettings
    }

    static func read(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices) {
        api.runSignedIn(request, responder) { storage, device, _ in
            document(try storage.settings.settings(playerID: device.player.id))
        }
    }

    static func write(_ request: HTTPRequest, _ responder: HTTPResponder, _ api: APIServices, patch: Bool) {
        let token: String
        let basedOn: Precondition
        let body: Data
        let address = api.clientAddress(request)
        let rateLimits = api.rateLimits
        do {
            token = try APIServices.bearerToken(request)
            basedOn = try version(request)
            body = try checkedBody(request)
            // The limit on tokens that sign nobody in, as `APIServices.runSignedIn` applies it.
            if let refusal = rateLimits.refusal(.signIn, .address, key: RateLimits.addressKey(address)) { throw refusal }
        } catch {
            return responder.respond(APIError(error).response)
        }
        let events = api.events
        let logger = api.logger
        // The serial lane (no key): one player's writes from several devices commit and publish
        // in one order, so no device hears version 3 after version 4.
        api.worker.perform({ storage -> (HTTPResponse, (playerID: Int64, deviceID: Int64, VersionedSettings)?) in
            let now = storage.now
            let device = try rateLimits.signIn(token: token, address: address, players: storage.players, in: storage.rateLimits, now: now)
            let result: SettingsWriteResult
            do {
                switch basedOn {
                case .version(let version):
                    result = patch
                        ? try storage.settings.patch(playerID: device.player.id, json: body, basedOnVersion: version, now: now)
                        : try storage.settings.write(playerID: device.player.id, json: body, basedOnVersion: version, now: now)
                case .weak:
                    // A weak tag never matches (RFC 9110 §13.1.1): answered as a stale write is,
                    // with the document to base the write on, and nothing written.
                    result = .stale(current: try storage.settings.settings(playerID: device.player.id))
                }
            } catch let error as StoreError where error.code == .invalid {
                throw refusal(error)
            }
            switch result {
            case .written(let stored):
                return (document(stored), (device.player.id, device.deviceID, stored))
            case .stale(let current):
                let message: String
                switch basedOn {
                case .version(let version):
                    message = "These settings were changed on another device since version \(version); they are now at version \(current.version). The current document is in 'current': apply your change to it and send it again with If-Match: \"\(current.version)\"."
                case .weak(let tag):
                    message = "If-Match holds a weak ETag (\(tag.prefix(40))), which never matches a write's precondition (RFC 9110 §13.1.1): send the ETag as GET /api/v1/settings gave it, without W/. The current document is in 'current', at version \(current.version): If-Match: \"\(current.version)\"."
                }
                let response = try APIJSON.response(
                    StaleJSON(error: .init(code: StoreError.Code.stale.rawValue, message: message), current: current),
                    status: 412, headers: [HTTPHeader("etag", etag(current.version))])
                return (response, nil)
            }
        }, then: { result in
            // Back on the service thread: answer first, then tell the other devices.
            responder.respond(APIServices.response(result.map(\.0), logger: logger))
            if case .success((_, let change?)) = result {
                events.publishSettingsChanged(playerID: change.playerID, deviceID: change.deviceID, settings: change.2)
            }
        })
    }

    /// The stored document as the API shows it, with its version as the ETag.
    static func document(_ settings: VersionedSettings) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/json",
                     headers: [HTTPHeader("cache-control", "no-store"), HTTPHeader("etag", etag(settings.version))],
                     body: Array(settings.jsonData()))
    }

    static func etag(_ version: Int) -> String {
        "\"\(version)\""
    }

    /// What `If-Match` asks a write to be based on.
    enum Precondition: Equatable {
        /// `"3"` as the ETag was sent (a bare `3` is read too).
        case version(Int)
        /// `W/"3"`: a weak tag, which If-Match's strong comparison never matches (412).
        case weak(String)
    }

    /// The precondition in `If-Match`. A write without one is refused with 428: guessing would
    /// lose someone's change.
    static func version(_ request: HTTPRequest) throws(APIError) -> Precondition {
        guard let header = request[header: "if-match"]?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            throw APIError(status: 428, code: "precondition_required",
                           message: "A settings write must say which version it is based on: send 'If-Match' with the ETag from GET /api/v1/settings (\"0\" before the first write).",
                           field: "If-Match")
        }
        var text = Substring(header)
        let weak = text.hasPrefix("W/")
        if weak { text = text.dropFirst(2) }
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        guard let version = Int(text), version >= 0 else {
            throw APIError.invalid("If-Match must be a settings version as GET /api/v1/settings gave it in ETag, e.g. \"3\".", field: "If-Match")
        }
        return weak ? .weak(header) : .version(version)
    }

    /// The body must be one JSON object sent as JSON; its fields are checked on the storage
    /// thread by the settings' own rules.
    static func checkedBody(_ request: HTTPRequest) throws(APIError) -> Data {
        let body = try APIJSON.objectBody(request, required: true)
        guard (try? JSONSerialization.jsonObject(with: Data(body))) is [String: Any] else {
            throw APIError.malformedJSON("The body must be one JSON object: the settings fields to store.")
        }
        return Data(body)
    }

    /// A refused field. An unknown one gets its own code, as elsewhere in the API (the settings'
    /// rules word it "is not a settings field").
    static func refusal(_ error: StoreError) -> APIError {
        var refusal = APIError(error)
        if error.message.hasPrefix("is not a settings field") { refusal.code = "unknown_field" }
        return refusal
    }
}
