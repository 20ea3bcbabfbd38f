import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// A refusal the API answers with: a status and `{"error":{"code":…,"message":…,"field":…}}`.
///
/// Every error a route can meet ends up here: its own checks (a missing token, bad JSON) are
/// made as `APIError`s, and what the storage thread throws is mapped by `init(_:)`. The codes
/// are part of the API (docs/openapi.json lists them); the messages are for people.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    public var field: String?
    public var headers: [HTTPHeader] = []

    public init(status: Int, code: String, message: String, field: String? = nil, headers: [HTTPHeader] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
    }

    public var response: HTTPResponse {
        .error(status: status, code: code, message: message, field: field, headers: headers)
    }

    /// Maps what a route's work threw. Storage refusals keep their code and message; anything
    /// else (a database failure, an unreadable stored row, a bug) is a 500 whose details go to the log, not the client.
    public init(_ error: any Error, logger: Logger? = nil) {
        switch error {
        case let error as APIError:
            self = error
        case let error as RateLimitedError:
            self = .rateLimited(error.message, retryAfter: error.retryAfter)
        case let error as QuotaExhaustedError:
            self.init(status: 403, code: "no_plays_left", message: error.storeError.message, field: error.storeError.field)
        case let error as DailyRoadPlayedError:
            self.init(status: 409, code: "daily_played", message: error.storeError.message, field: error.storeError.field)
        case let error as StoreError where error.isRefusal:
            self.init(error)
        case let error as DatabaseWorkerError where error == .shutDown:
            self.init(status: 503, code: "unavailable", message: "The server is shutting down; try again in a moment.",
                      headers: [HTTPHeader("retry-after", "5")])
        default:
            logger?.error("request failed", metadata: ["error": String(describing: error)])
            self.init(status: 500, code: "internal", message: "Something went wrong on the server; it has been logged. Try again.")
        }
    }

    /// `StoreError`'s codes are the API's codes, with the status each one means.
    public init(_ error: StoreError) {
        let status: Int
        switch error.code {
        case .invalid: status = 400
        case .unauthorized: status = 401
        case .forbidden: status = 403
        case .notFound: status = 404
        case .conflict: status = 409
        case .expired: status = 410
        case .stale: status = 412
        case .rateLimited: status = 429
        default: status = 400
        }
        var headers: [HTTPHeader] = []
        if status == 401 { headers.append(Self.bearerChallenge) }
        // Some repositories word a refusal as the rest of a sentence about the field
        // ("must be from 1 to 100"); put the field in front so it reads on its own.
        var message = error.message
        if let field = error.field, message.first?.isLowercase == true { message = "'\(field)' \(message)" }
        self.init(status: status, code: error.code.rawValue, message: message, field: error.field, headers: headers)
    }

    /// RFC 6750: a 401 says which scheme would work.
    static let bearerChallenge = HTTPHeader("www-authenticate", #"Bearer realm="retrorapid""#)

    // MARK: - The API's own refusals

    static func unauthorized(_ message: String) -> APIError {
        APIError(status: 401, code: "unauthorized", message: message, headers: [bearerChallenge])
    }

    static func malformedJSON(_ message: String) -> APIError {
        APIError(status: 400, code: "malformed_json", message: message, field: "body")
    }

    static func unknownField(_ name: String, allowed: [String]) -> APIError {
        let list = allowed.isEmpty ? "no fields" : allowed.sorted().joined(separator: ", ")
        return APIError(status: 400, code: "unknown_field",
                        message: "The body has a field '\(name)' this request does not take; it takes \(list).", field: name)
    }

    static func invalid(_ message: String, field: String?) -> APIError {
        APIError(status: 400, code: StoreError.Code.invalid.rawValue, message: message, field: field)
    }

    static func unsupportedMediaType(_ received: String?) -> APIError {
        APIError(status: 415, code: "unsupported_media_type",
                 message: "The body must be JSON sent with 'Content-Type: application/json'"
                    + (received.map { "; this one was sent as '\($0)'." } ?? "; this one had no Content-Type."))
    }

    static func rateLimited(_ message: String, retryAfter seconds: Int) -> APIError {
        APIError(status: 429, code: StoreError.Code.rateLimited.rawValue, message: message,
                 headers: [HTTPHeader("retry-after", String(max(1, seconds)))])
    }

    static func notFound(_ message: String, field: String? = nil) -> APIError {
        APIError(status: 404, code: StoreError.Code.notFound.rawValue, message: message, field: field)
    }
}
