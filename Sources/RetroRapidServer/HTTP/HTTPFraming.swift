/// The head of one request as the framing rules see it: the values as libwebsockets kept
/// them (a repeated header's values joined by ", ": `lws_hdr_copy` puts a comma between the
/// fragments, the second of which starts with a space), before any handler or file mount.
public struct HTTPRequestHead: Sendable, Equatable {
    /// HTTP/2 streams carry their framing in frames: no Host (it is `:authority`), no
    /// Transfer-Encoding.
    public var isHTTP2: Bool
    /// The protocol version from the request line, e.g. "HTTP/1.1"; nil over HTTP/2, and when
    /// the request line ended before one.
    public var version: String?
    /// The decoded path, as libwebsockets normalised it.
    public var path: [UInt8]
    /// Path and query as sent, in bytes (libwebsockets decodes them; this is their length).
    public var targetBytes: Int
    /// The header fields' names and values together, the request line not counted.
    public var headerBytes: Int
    public var host: String?
    public var contentLength: String?
    public var transferEncoding: String?

    public init(isHTTP2: Bool = false, version: String? = "HTTP/1.1", path: [UInt8] = Array("/".utf8),
                targetBytes: Int = 1, headerBytes: Int = 0, host: String? = "localhost",
                contentLength: String? = nil, transferEncoding: String? = nil) {
        self.isHTTP2 = isHTTP2
        self.version = version
        self.path = path
        self.targetBytes = targetBytes
        self.headerBytes = headerBytes
        self.host = host
        self.contentLength = contentLength
        self.transferEncoding = transferEncoding
    }
}

/// Whether a request's head is well framed and within `HTTPRequestLimits`, and how long its
/// body is. One request whose length two parties could read differently (Content-Length
/// against Transfer-Encoding, two lengths) is how requests are smuggled past a proxy, so every
/// doubt is refused (RFC 9112 §6.1, §6.3; RFC 9110 §8.6; RFC 9112 §3.2 for Host).
///
/// Pure, no libwebsockets: the service thread calls it, and so can a fuzzer.
public enum HTTPFraming {
    /// The body's length in bytes (0 without one; `Int.max` for a number too large to hold,
    /// which the body limit then refuses), or the refusal.
    public static func bodyLength(of head: HTTPRequestHead, limits: HTTPRequestLimits) throws(APIError) -> Int {
        if head.targetBytes > limits.maxTargetBytes {
            throw APIError(status: 414, code: "uri_too_long",
                message: "The request's path and query are \(head.targetBytes) bytes; the limit is \(limits.maxTargetBytes).")
        }
        if head.headerBytes > limits.maxHeaderBytes {
            throw APIError(status: 431, code: "headers_too_large",
                message: "The request's header fields are \(head.headerBytes) bytes; the limit is \(limits.maxHeaderBytes).")
        }
        if head.path.contains(0) {
            throw badRequest("The path contains a NUL character (%00), which no path here has.", field: "path")
        }
        if !head.isHTTP2 {
            // libwebsockets ends the request line at a CR or LF in the target, raw or decoded
            // from %0D / %0A, and skips the rest of the line: the version never comes, and
            // neither does the rest of the target, so there is no path to answer for.
            guard let version = head.version else {
                throw badRequest("The request line has no HTTP version after its target: the target holds a CR or LF "
                                 + "(raw, or as %0D / %0A), which no path here has, or the version is missing.", field: "target")
            }
            guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
                throw APIError(status: 505, code: "http_version_not_supported",
                    message: "This server speaks HTTP/1.0, HTTP/1.1 and HTTP/2; the request said \(version.prefix(32)).")
            }
            if version == "HTTP/1.1" {
                guard let host = head.host, !host.isEmpty else {
                    throw badRequest("An HTTP/1.1 request needs a Host header (RFC 9112 §3.2).", field: "host")
                }
                // Bytes, not Characters: a combining mark after a space or comma joins it into
                // one Character that is neither (found by fuzz-http-query).
                guard !host.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\t") }) else {
                    throw badRequest("The request has more than one Host header, or a Host with spaces.", field: "host")
                }
            }
        }
        if let transferEncoding = head.transferEncoding {
            if head.isHTTP2 {
                throw badRequest("HTTP/2 requests carry no Transfer-Encoding (RFC 9113 §8.2.2).", field: "transfer-encoding")
            }
            if head.contentLength != nil {
                throw badRequest("The request has both Transfer-Encoding and Content-Length; send only Content-Length.",
                                 field: "transfer-encoding")
            }
            if head.version != "HTTP/1.1" {
                throw badRequest("Transfer-Encoding needs HTTP/1.1 (RFC 9112 §6.1).", field: "transfer-encoding")
            }
            let codings = transferEncoding.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
            guard codings.last.map({ $0.lowercased() == "chunked" }) == true else {
                throw badRequest("The request's Transfer-Encoding '\(transferEncoding)' does not end in chunked, so its "
                                     + "length cannot be known (RFC 9112 §6.3).", field: "transfer-encoding")
            }
            throw APIError(status: 411, code: "length_required",
                message: "This server does not read chunked request bodies; send the body with a Content-Length.",
                field: "transfer-encoding")
        }
        guard let contentLength = head.contentLength else { return 0 }
        return try Self.contentLength(contentLength)
    }

    /// Content-Length is `1*DIGIT` (RFC 9110 §8.6): no sign, no spaces, one value. Two
    /// headers (which libwebsockets joins with ", ") are refused even when they agree.
    public static func contentLength(_ text: String) throws(APIError) -> Int {
        let digits = text.utf8
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw badRequest("Content-Length must be one decimal number, got '\(text.prefix(64))'.", field: "content-length")
        }
        return Int(text) ?? Int.max
    }

    /// The answer for a head libwebsockets gave up on without a word (it has no hook there): the
    /// likeliest reason from what is known. A head still arriving when its time ran out is a
    /// 408; one that filled libwebsockets' buffer, 431; anything else it cannot take (a %00 in
    /// the query, a byte it does not allow, more pieces than it keeps), 400.
    public static func unparsedHeadRefusal(bytesReceived: UInt64, elapsedMicroseconds: Int64,
                                           limits: HTTPRequestLimits) -> APIError {
        // libwebsockets' clock runs from when it took the connection: a little slack.
        if elapsedMicroseconds >= Int64(limits.headerTimeoutSeconds) * 1_000_000 - 500_000 {
            return APIError(status: 408, code: "request_timeout",
                message: "The request's head did not arrive whole within \(limits.headerTimeoutSeconds) seconds.")
        }
        if bytesReceived >= UInt64(limits.headerBufferBytes) - 1 {
            return APIError(status: 431, code: "headers_too_large",
                message: "The request's head (request line and header fields) is larger than \(limits.headerBufferBytes) bytes.")
        }
        return APIError(status: 400, code: "bad_request",
            message: "The request could not be read as HTTP: a %00 in its query or after a letter of its path, a "
                + "malformed %-escape, or more query parameters and header lines than the server keeps.")
    }

    static func badRequest(_ message: String, field: String) -> APIError {
        APIError(status: 400, code: "bad_request", message: message, field: field)
    }
}
