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
    /// The query string's `name=value` pairs, decoded, in order. A name may repeat.
    public var queryItems: [HTTPQueryItem]
    /// The request headers the server reads (see `HTTPRequest.readHeaders`), by lower-case name.
    public var headers: [String: String]
    /// The peer's IP address as text ("127.0.0.1", "::1"); empty when unknown.
    public var remoteAddress: String
    /// Values of the `{name}` segments of the route that matched; set by the router.
    public var pathParameters: [String: String]
    /// The request body (empty for GET); at most `HTTPRequest.maximumBodySize` bytes.
    public var body: [UInt8]

    /// Larger bodies are refused with 413 before they are read.
    public static let maximumBodySize = 64 * 1024

    /// The headers copied from libwebsockets into `headers`. Others are not looked at: a
    /// handler that needs one more adds it here.
    public static let readHeaders = ["authorization", "content-type", "cookie", "host", "if-match", "origin", "payment-signature",
                                      "stripe-signature", "x-csrf-token", "x-forwarded-for", "x-forwarded-proto"]

    public init(method: HTTPMethod, path: String, queryItems: [HTTPQueryItem] = [],
                headers: [String: String] = [:], remoteAddress: String = "",
                pathParameters: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.queryItems = queryItems
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.pathParameters = pathParameters
        self.body = body
    }

    /// A header by name, any case.
    public subscript(header name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The first value of a query parameter.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}

/// One `name=value` pair of a query string, percent-decoded.
public struct HTTPQueryItem: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
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

    /// The API's error shape: `{"error":{"code":"…","message":"…"}}`, plus `field` (the
    /// input at fault) when there is one.
    public static func error(status: Int, code: String, message: String, field: String? = nil,
                             headers: [HTTPHeader] = []) -> HTTPResponse {
        struct Body: Encodable {
            struct Detail: Encodable { let code: String; let message: String; let field: String? }
            let error: Detail
        }
        // Strings cannot fail to encode.
        let data = try! APIJSON.encoder().encode(Body(error: .init(code: code, message: message, field: field)))
        return .json(status: status, String(decoding: data, as: UTF8.self), headers: headers)
    }
}
