/// An HTTP/1.1 response as bytes, for a connection libwebsockets no longer treats as HTTP (a
/// request line it handed over as a raw socket, a head it gave up on): status line, the vhost's
/// own headers (which libwebsockets adds to every other answer), `connection: close`. Pure.
enum HTTPRawResponse {
    static func bytes(_ response: HTTPResponse, extraHeaders: [(name: String, value: String)]) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\n"
        head += "content-type: \(response.contentType)\r\n"
        head += "content-length: \(response.body.count)\r\n"
        head += "connection: close\r\n"
        for header in response.headers { head += "\(header.name): \(header.value)\r\n" }
        // The vhost's names carry libwebsockets' trailing colon ("x-frame-options:").
        for header in extraHeaders { head += "\(header.name) \(header.value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + response.body
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 431: "Request Header Fields Too Large"
        default: ""
        }
    }
}
