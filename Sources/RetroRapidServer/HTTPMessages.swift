import Foundation

/// The request methods the server understands.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET", head = "HEAD", post = "POST", put = "PUT", patch = "PATCH"
    case delete = "DELETE", options = "OPTIONS"
}

/// One HTTP request as a route handler sees it.
public struct HTTPRequest: Sendable, Equatable {
    public var method: HTTPMethod
    /// The path, percent-decoded and normalised by libwebsockets, without the query string.
    public var path: String
    /// The request body (empty for GET); at most `HTTPRequest.maximumBodySize` bytes.
    public var body: [UInt8]

    /// Larger bodies are refused with 413 before they are read.
    public static let maximumBodySize = 64 * 1024

    public init(method: HTTPMethod, path: String, body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.body = body
    }
}

/// One response header. Names are lower case, as HTTP/2 requires.
public struct HTTPHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name.lowercased()
        self.value = value
    }
}

/// What a route handler answers. The server adds Content-Length and the security headers.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var headers: [HTTPHeader]
    public var body: [UInt8]

    public init(status: Int, contentType: String, headers: [HTTPHeader] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// A JSON response from already-encoded JSON text. API answers are never cached.
    public static func json(status: Int = 200, _ text: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json",
                     headers: [HTTPHeader("cache-control", "no-store")] + headers,
                     body: Array(text.utf8))
    }

    /// The API's error shape: `{"error":{"code":"…","message":"…"}}`.
    public static func error(status: Int, code: String, message: String,
                             headers: [HTTPHeader] = []) -> HTTPResponse {
        struct Body: Encodable {
            struct Detail: Encodable { let code: String; let message: String }
            let error: Detail
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Two strings cannot fail to encode.
        let data = try! encoder.encode(Body(error: .init(code: code, message: message)))
        return .json(status: status, String(decoding: data, as: UTF8.self), headers: headers)
    }
}
