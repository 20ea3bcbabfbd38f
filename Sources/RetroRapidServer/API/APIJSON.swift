import Foundation

/// A JSON request body the API accepts. `fields` lists every top-level member it may have:
/// anything else is refused with 400 `unknown_field` rather than silently ignored, so a client's
/// typo (`displayname`) is found at once instead of looking like success.
protocol APIRequestBody: Decodable, Sendable {
    static var fields: [String] { get }
}

/// How the API reads and writes JSON: camelCase members, dates as ISO-8601 UTC text to the
/// second (`2026-01-15T10:23:45Z`), keys sorted so responses are stable to read and test.
enum APIJSON {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// A JSON response from an Encodable value. Encoding our own response types cannot fail;
    /// if it ever did, that is a bug, answered as a 500 by the caller.
    static func response<T: Encodable>(_ value: T, status: Int = 200, headers: [HTTPHeader] = []) throws -> HTTPResponse {
        let data = try encoder().encode(value)
        return HTTPResponse(status: status, contentType: "application/json",
                            headers: [HTTPHeader("cache-control", "no-store")] + headers, body: Array(data))
    }

    /// Whether the request says its body is JSON: `application/json`, any parameters
    /// (`; charset=utf-8`), any case.
    static func isJSONContentType(_ value: String?) -> Bool {
        guard let value else { return false }
        let mediaType = value.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    /// Checks that a body is present (when `required`) and sent as JSON, and is one JSON
    /// object. An empty body, when allowed, reads as `{}`. Does not look at the members.
    static func objectBody(_ request: HTTPRequest, required: Bool) throws(APIError) -> [UInt8] {
        if request.body.isEmpty {
            guard !required else {
                throw APIError.malformedJSON("This request needs a JSON object as its body.")
            }
            return Array("{}".utf8)
        }
        guard isJSONContentType(request[header: "content-type"]) else {
            throw APIError.unsupportedMediaType(request[header: "content-type"])
        }
        return request.body
    }

    /// Decodes a request body: 415 unless it is JSON, 400 `malformed_json` unless it parses as
    /// one object, 400 `unknown_field` for a member `T` does not take, 400 `invalid` (naming
    /// the field) for a member of the wrong type or a missing required one.
    static func decode<T: APIRequestBody>(_ type: T.Type, from request: HTTPRequest, required: Bool = false) throws(APIError) -> T {
        let body = try objectBody(request, required: required)
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(body))
        } catch {
            throw APIError.malformedJSON("The body is not valid JSON: \(Self.describe(error))")
        }
        guard let members = object as? [String: Any] else {
            throw APIError.malformedJSON("The body must be a JSON object ({ … }).")
        }
        if let unknown = members.keys.sorted().first(where: { !T.fields.contains($0) }) {
            throw APIError.unknownField(unknown, allowed: T.fields)
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw Self.refusal(error)
        } catch {
            throw APIError.malformedJSON("The body could not be read: \(Self.describe(error))")
        }
    }

    /// A decoding failure in words, naming the field.
    static func refusal(_ error: DecodingError) -> APIError {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return APIError.invalid("'\(path(context.codingPath))' must be \(Self.jsonTypeName(type)).", field: path(context.codingPath))
        case .valueNotFound(let type, let context):
            return APIError.invalid("'\(path(context.codingPath))' must be \(Self.jsonTypeName(type)), not null.", field: path(context.codingPath))
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return APIError.invalid("'\(field)' is required.", field: field)
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            return APIError.invalid("'\(field)' is not valid: \(context.debugDescription)", field: field.isEmpty ? nil : field)
        @unknown default:
            return APIError.malformedJSON("The body could not be read.")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type: return "a whole number"
        case is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default: return "a \(type)"
        }
    }

    private static func describe(_ error: any Error) -> String {
        (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
    }
}
