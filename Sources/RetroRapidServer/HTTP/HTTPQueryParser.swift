/// Turns a query string's pieces into `HTTPQueryItem`s, refusing what would otherwise be lost.
///
/// libwebsockets splits the query at `&` and `;` and percent-decodes each piece (`+` is a
/// space; an encoded `=` in a name becomes `_`); the service thread reads every piece, each
/// sized exactly (LWSHTTPConnection.swift), and hands them here. Every piece is kept or the
/// request is refused: none is dropped, so a route never sees a query that was cut short.
///
/// Pure, no libwebsockets: the service thread calls it, and so can a fuzzer.
public enum HTTPQueryParser {
    /// The items, in order, from the decoded pieces. An empty piece (`a=1&&b=2`) is skipped:
    /// it names nothing.
    public static func items(fromPieces pieces: [[UInt8]], limits: HTTPRequestLimits) throws(APIError) -> [HTTPQueryItem] {
        let named = pieces.filter { !$0.isEmpty }
        if named.count > limits.maxQueryParameters {
            throw APIError(status: 400, code: "bad_request",
                message: "The query has \(named.count) parameters; the limit is \(limits.maxQueryParameters).", field: "query")
        }
        var items: [HTTPQueryItem] = []
        items.reserveCapacity(named.count)
        for piece in named {
            if piece.contains(0) {
                throw APIError(status: 400, code: "bad_request",
                    message: "The query contains a NUL character (%00).", field: "query")
            }
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                items.append(HTTPQueryItem(String(decoding: piece[..<equals], as: UTF8.self),
                                           String(decoding: piece[(equals + 1)...], as: UTF8.self)))
            } else {
                items.append(HTTPQueryItem(String(decoding: piece, as: UTF8.self), ""))
            }
        }
        return items
    }
}
