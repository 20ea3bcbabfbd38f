import RetroRapidServer

/// The server's HTTP request checks (no libwebsockets in them), fed what libwebsockets hands
/// the service thread (Sources/RetroRapidServer/HTTP/LWSHTTPConnection.swift, `admit`). The first
/// byte chooses the mode (its value modulo 3, bit 0x80 ignored) and the limits (bit 0x80 set:
/// small ones, so that short inputs reach them: 4 parameters, 64-byte target, 128 bytes of
/// header fields, a 256-byte head buffer, 3-second head timeout); the rest is:
///
/// - mode 0, `HTTPQueryParser.items(fromPieces:limits:)`: a query string as sent after `?`,
///   split and decoded as libwebsockets does (lib/roles/http/parsers.c, `lws_parse_urldecode`):
///   a piece ends at an unencoded `&` or `;`, `%XX` is the byte XX, an unencoded `+` a space,
///   an encoded `=` before the piece's first unencoded `=` becomes `_`. Where libwebsockets
///   would drop the request (a malformed escape, a `%00`) the bytes are kept instead, so the
///   parser's own NUL check is reached too. Properties:
///   - an accepted query has exactly one item per non-empty piece, in order (none dropped),
///     at most the limit, each the piece split at its first `=` (no `=`: an empty value);
///   - a refusal is 400 `bad_request` on `query`, and only for more non-empty pieces than the
///     limit (checked first) or a piece with a NUL.
/// - mode 1, `HTTPFraming.bodyLength(of:limits:)`: a request head as text, lines ending in
///   `\n` (a `\r` before it dropped), up to an empty line. The request line is
///   `METHOD TARGET VERSION` (VERSION `HTTP/2` stands for an HTTP/2 stream: no version, the
///   host is `:authority`); each other line `name:value`, the name compared without case, the
///   value without leading spaces and tabs. As `LWSHTTPConnection.requestHead` reads them: a
///   repeated header's values are joined with ", " (libwebsockets' `lws_hdr_copy` puts a comma
///   between the fragments, the second of which starts with a space), the path is the
///   target before `?` with `%XX` decoded, and an empty value counts as present (the
///   server tells it from a missing header). Properties:
///   - a body length comes only for a well-formed head: target and header fields within the
///     limits, no NUL in the path, HTTP/1.0, HTTP/1.1 or HTTP/2, on HTTP/1.1 exactly one
///     non-empty Host without spaces or commas, no Transfer-Encoding line at all, at most
///     one Content-Length line and that one only digits;
///   - the length is the digits' value (`Int.max` beyond it), 0 without a Content-Length;
///   - a refusal is one of the documented ones (414, 431, 400 on path / host /
///     transfer-encoding / content-length, 400 on the target for a request line without a
///     version, 505 for another version, 411 on transfer-encoding) with a message.
/// - mode 2, `HTTPFraming.unparsedHeadRefusal`: the next 8 bytes are the bytes received and
///   the 8 after them the microseconds elapsed (little-endian; missing bytes are 0). The
///   answer is 408 from the head timeout (less half a second) on, else 431 once the head
///   buffer is full, else 400; each with a message.
public enum HTTPQueryFuzzTarget: FuzzTarget {
    public static let name = "http-query"
    public static let outcomes: Set<String> = [
        "query-accepted", "query-too-many", "query-nul",
        "head-accepted-empty", "head-accepted-body", "head-414", "head-431", "head-400-path", "head-400-host",
        "head-400-transfer-encoding", "head-400-content-length", "head-400-target", "head-505", "head-411",
        "unparsed-408", "unparsed-431", "unparsed-400",
    ]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        guard let first = input.first else { return try checkQuery([], limits: HTTPRequestLimits()) }
        var limits = HTTPRequestLimits()
        if first & 0x80 != 0 {
            limits.maxQueryParameters = 4
            limits.maxTargetBytes = 64
            limits.maxHeaderBytes = 128
            limits.headerBufferBytes = 256
            limits.requestTimeoutSeconds = 3
        }
        let rest = Array(input.dropFirst())
        switch (first & 0x7F) % 3 {
        case 0: return try checkQuery(rest, limits: limits)
        case 1: return try checkHead(rest, limits: limits)
        default: return try checkUnparsed(rest, limits: limits)
        }
    }

    // MARK: - Query

    /// The decoded pieces of a query string, as libwebsockets splits and decodes them.
    static func pieces(ofQuery query: [UInt8]) -> [[UInt8]] {
        var pieces: [[UInt8]] = [[]]
        var literalEquals = false
        var index = 0
        while index < query.count {
            var byte = query[index]
            var encoded = false
            if byte == UInt8(ascii: "%"), index + 2 < query.count,
               let high = hexValue(query[index + 1]), let low = hexValue(query[index + 2]) {
                byte = high << 4 | low
                encoded = true
                index += 2
            }
            index += 1
            if !encoded && (byte == UInt8(ascii: "&") || byte == UInt8(ascii: ";")) {
                pieces.append([])
                literalEquals = false
                continue
            }
            if encoded && byte == UInt8(ascii: "=") && !literalEquals { byte = UInt8(ascii: "_") }
            if !encoded && byte == UInt8(ascii: "=") { literalEquals = true }
            if !encoded && byte == UInt8(ascii: "+") { byte = UInt8(ascii: " ") }
            pieces[pieces.count - 1].append(byte)
        }
        // libwebsockets has no query fragment for an empty query string.
        return query.isEmpty ? [] : pieces
    }

    static func checkQuery(_ query: [UInt8], limits: HTTPRequestLimits) throws(PropertyViolation) -> String {
        let pieces = pieces(ofQuery: query)
        let named = pieces.filter { !$0.isEmpty }
        let items: [HTTPQueryItem]
        do {
            items = try HTTPQueryParser.items(fromPieces: pieces, limits: limits)
        } catch {
            guard error.status == 400, error.code == "bad_request", error.field == "query", !error.message.isEmpty else {
                throw PropertyViolation("a query refusal that is not 400 bad_request on query: \(error)")
            }
            if named.count > limits.maxQueryParameters { return "query-too-many" }
            guard named.contains(where: { $0.contains(0) }) else {
                throw PropertyViolation("a query of \(named.count) pieces without a NUL refused: \(error)")
            }
            return "query-nul"
        }
        guard items.count == named.count else {
            throw PropertyViolation("\(named.count) non-empty pieces became \(items.count) items")
        }
        guard items.count <= limits.maxQueryParameters else {
            throw PropertyViolation("\(items.count) items accepted over the limit of \(limits.maxQueryParameters)")
        }
        for (piece, item) in zip(named, items) {
            guard !piece.contains(0) else { throw PropertyViolation("a piece with a NUL accepted: \(piece)") }
            let name: ArraySlice<UInt8>, value: ArraySlice<UInt8>
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                (name, value) = (piece[..<equals], piece[(equals + 1)...])
            } else {
                (name, value) = (piece[...], [])
            }
            guard item.name == String(decoding: name, as: UTF8.self), item.value == String(decoding: value, as: UTF8.self) else {
                throw PropertyViolation("the piece \(piece) became the item \(item)")
            }
        }
        return "query-accepted"
    }

    // MARK: - Head

    /// What the emulated head holds, besides the `HTTPRequestHead` built from it: how many
    /// lines each framing header had, for the properties.
    struct ParsedHead {
        var head: HTTPRequestHead
        var lines: [String: Int]
        var contentLengthLine: [UInt8]?
    }

    static func parseHead(_ text: [UInt8]) -> ParsedHead {
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : Array(line)
        }
        if let end = lines.firstIndex(where: \.isEmpty) { lines.removeSubrange(end...) }
        let requestLine = lines.first.map { $0.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false) } ?? []
        let target = requestLine.count > 1 ? Array(requestLine[1]) : []
        let versionText = requestLine.count > 2 ? String(decoding: requestLine[2], as: UTF8.self) : nil
        let isHTTP2 = versionText == "HTTP/2"
        let pathEnd = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        let path = decodePercent(target[..<pathEnd])
        let query = target[pathEnd...].dropFirst()

        var values: [String: [UInt8]] = [:]
        var counts: [String: Int] = [:]
        var headerBytes = 0
        for line in lines.dropFirst() {
            // An HTTP/2 pseudo-header (":authority:host") starts with a colon of its name.
            let nameStart = line.first == UInt8(ascii: ":") ? 1 : 0
            guard let nameEnd = line[nameStart...].firstIndex(of: UInt8(ascii: ":")), nameEnd > 0 else { continue }
            let name = String(decoding: line[..<nameEnd], as: UTF8.self).lowercased()
            let value = Array(line[(nameEnd + 1)...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            counts[name, default: 0] += 1
            if let earlier = values[name] {
                values[name] = earlier + Array(", ".utf8) + value
            } else {
                values[name] = value
            }
            headerBytes += name.utf8.count + 1 + value.count
        }
        func string(_ name: String) -> String? { values[name].map { String(decoding: $0, as: UTF8.self) } }
        let head = HTTPRequestHead(
            isHTTP2: isHTTP2,
            version: isHTTP2 ? nil : versionText,
            path: path,
            targetBytes: path.count + (query.isEmpty ? 0 : query.count + 1),
            headerBytes: headerBytes,
            host: isHTTP2 ? string(":authority") : string("host"),
            contentLength: string("content-length"),
            transferEncoding: string("transfer-encoding"))
        return ParsedHead(head: head, lines: counts, contentLengthLine: counts["content-length"] == 1 ? values["content-length"] : nil)
    }

    static func checkHead(_ text: [UInt8], limits: HTTPRequestLimits) throws(PropertyViolation) -> String {
        let parsed = parseHead(text)
        let head = parsed.head
        let length: Int
        do {
            length = try HTTPFraming.bodyLength(of: head, limits: limits)
        } catch {
            return try outcome(of: error, head: head, limits: limits)
        }
        var broken: [String] = []
        if head.targetBytes > limits.maxTargetBytes { broken.append("target over the limit") }
        if head.headerBytes > limits.maxHeaderBytes { broken.append("header fields over the limit") }
        if head.path.contains(0) { broken.append("a NUL in the path") }
        if !head.isHTTP2 && head.version != "HTTP/1.1" && head.version != "HTTP/1.0" {
            broken.append("version \(head.version ?? "none")")
        }
        if !head.isHTTP2 && head.version == "HTTP/1.1" {
            let host = Array((head.host ?? "").utf8)
            if parsed.lines["host"] != 1 || host.isEmpty || host.contains(where: { $0 == 0x20 || $0 == 0x2C || $0 == 0x09 }) {
                broken.append("Host lines \(parsed.lines["host"] ?? 0), host '\(head.host ?? "")'")
            }
        }
        if parsed.lines["transfer-encoding"] != nil { broken.append("a Transfer-Encoding line") }
        let contentLengthLines = parsed.lines["content-length"] ?? 0
        var expected = 0
        if contentLengthLines > 1 {
            broken.append("\(contentLengthLines) Content-Length lines")
        } else if let digits = parsed.contentLengthLine {
            if digits.isEmpty || !digits.allSatisfy({ (0x30...0x39).contains($0) }) {
                broken.append("Content-Length '\(String(decoding: digits, as: UTF8.self))'")
            }
            for digit in digits where (0x30...0x39).contains(digit) {
                let (times, overflowTimes) = expected.multipliedReportingOverflow(by: 10)
                let (plus, overflowPlus) = times.addingReportingOverflow(Int(digit - 0x30))
                if overflowTimes || overflowPlus { expected = .max; break }
                expected = plus
            }
        }
        guard broken.isEmpty else { throw PropertyViolation("a body length of \(length) for a head with \(broken)") }
        guard length == expected else { throw PropertyViolation("a body length of \(length), not \(expected)") }
        return expected == 0 && contentLengthLines == 0 ? "head-accepted-empty" : "head-accepted-body"
    }

    /// The outcome of a framing refusal, or the violation when it is none of the documented ones.
    static func outcome(of refusal: APIError, head: HTTPRequestHead, limits: HTTPRequestLimits) throws(PropertyViolation) -> String {
        guard !refusal.message.isEmpty else { throw PropertyViolation("a refusal without a message: \(refusal)") }
        switch (refusal.status, refusal.code, refusal.field) {
        case (414, "uri_too_long", nil):
            guard head.targetBytes > limits.maxTargetBytes else { throw PropertyViolation("414 for \(head.targetBytes) bytes") }
            return "head-414"
        case (431, "headers_too_large", nil):
            guard head.headerBytes > limits.maxHeaderBytes else { throw PropertyViolation("431 for \(head.headerBytes) bytes") }
            return "head-431"
        case (400, "bad_request", "path"?):
            guard head.path.contains(0) else { throw PropertyViolation("400 on path without a NUL: \(head.path)") }
            return "head-400-path"
        case (400, "bad_request", "host"?):
            let host = head.host ?? ""
            guard !head.isHTTP2, head.version == "HTTP/1.1",
                  host.isEmpty || host.utf8.contains(where: { $0 == 0x20 || $0 == 0x2C || $0 == 0x09 }) else {
                throw PropertyViolation("400 on host '\(host)' over \(head.version ?? "HTTP/2")")
            }
            return "head-400-host"
        case (400, "bad_request", "transfer-encoding"?):
            guard head.transferEncoding != nil else { throw PropertyViolation("400 on transfer-encoding without one") }
            return "head-400-transfer-encoding"
        case (400, "bad_request", "content-length"?):
            guard let value = head.contentLength, value.isEmpty || !value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw PropertyViolation("400 on content-length '\(head.contentLength ?? "none")'")
            }
            return "head-400-content-length"
        case (400, "bad_request", "target"?):
            guard !head.isHTTP2, head.version == nil else { throw PropertyViolation("400 on the target over \(head.version ?? "HTTP/2")") }
            return "head-400-target"
        case (505, "http_version_not_supported", nil):
            guard !head.isHTTP2, let version = head.version, version != "HTTP/1.1", version != "HTTP/1.0" else {
                throw PropertyViolation("505 for \(head.version ?? "HTTP/2")")
            }
            return "head-505"
        case (411, "length_required", "transfer-encoding"?):
            let codings = (head.transferEncoding ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
            guard head.contentLength == nil, codings.last?.lowercased() == "chunked" else {
                throw PropertyViolation("411 for Transfer-Encoding '\(head.transferEncoding ?? "none")'")
            }
            return "head-411"
        default:
            throw PropertyViolation("a refusal that is not a documented one: \(refusal)")
        }
    }

    // MARK: - Unparsed head

    static func checkUnparsed(_ bytes: [UInt8], limits: HTTPRequestLimits) throws(PropertyViolation) -> String {
        func number(at offset: Int) -> UInt64 {
            (0..<8).reduce(0) { value, index in
                offset + index < bytes.count ? value | UInt64(bytes[offset + index]) << (8 * UInt64(index)) : value
            }
        }
        let received = number(at: 0)
        let elapsed = Int64(bitPattern: number(at: 8))
        let refusal = HTTPFraming.unparsedHeadRefusal(bytesReceived: received, elapsedMicroseconds: elapsed, limits: limits)
        guard !refusal.message.isEmpty, refusal.field == nil else { throw PropertyViolation("\(refusal)") }
        let timedOut = elapsed >= Int64(limits.headerTimeoutSeconds) * 1_000_000 - 500_000
        let full = received >= UInt64(limits.headerBufferBytes) - 1
        switch (refusal.status, refusal.code) {
        case (408, "request_timeout") where timedOut: return "unparsed-408"
        case (431, "headers_too_large") where !timedOut && full: return "unparsed-431"
        case (400, "bad_request") where !timedOut && !full: return "unparsed-400"
        default:
            throw PropertyViolation("\(refusal.status) \(refusal.code) after \(elapsed) µs and \(received) bytes")
        }
    }

    // MARK: - Bytes

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    static func decodePercent(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var decoded: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }
}
