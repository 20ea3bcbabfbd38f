import Foundation
import Testing
@testable import RetroRapidServer

@Suite("HTTP routes over a real connection")
struct HTTPRouteTests {
    @Test func healthzAnswersOkAsJSON() throws {
        let server = try RunningTestServer()
        let response = try server.get("/healthz")
        #expect(response.status == 200)
        #expect(response[header: "content-type"] == "application/json")
        #expect(response.text == #"{"status":"ok"}"#)
        #expect(response[header: "cache-control"] == "no-store")
        #expect(response[header: "content-security-policy"] != nil)
        #expect(response[header: "x-content-type-options"] == "nosniff")
    }

    @Test func unknownAPIPathsAnswer404WithTheJSONErrorShape() throws {
        let server = try RunningTestServer()
        for path in ["/api/nope", "/api", "/api/v1/players/42"] {
            let response = try server.get(path)
            #expect(response.status == 404, "\(path)")
            #expect(response[header: "content-type"] == "application/json", "\(path)")
            let error = try #require(response.json?["error"] as? [String: Any], "\(path)")
            #expect(error["code"] as? String == "not_found")
            #expect((error["message"] as? String)?.contains(path) == true)
        }
    }

    @Test func aWrongMethodAnswers405NamingTheAllowedOnes() throws {
        let server = try RunningTestServer()
        let response = try TestHTTPConnection(port: server.port).request("DELETE", "/healthz")
        #expect(response.status == 405)
        #expect(response[header: "allow"] == "GET, HEAD")
        #expect((response.json?["error"] as? [String: Any])?["code"] as? String == "method_not_allowed")
    }

    @Test func routeResponsesCloseTheConnectionOnHTTP1() throws {
        let server = try RunningTestServer()
        for (method, path) in [("GET", "/healthz"), ("HEAD", "/healthz"), ("GET", "/api/nope"), ("GET", "/missing.js")] {
            let connection = try TestHTTPConnection(port: server.port)
            let response = try connection.request(method, path)
            #expect(response[header: "connection"] == "close", "\(method) \(path)")
            #expect(connection.isClosedByPeer(), "\(method) \(path)")
        }
        let head = try TestHTTPConnection(port: server.port).request("HEAD", "/healthz")
        #expect(head.status == 200)
        #expect(head[header: "content-length"] == "15")
        #expect(head.body.isEmpty)
    }

    /// libwebsockets 4.1.6 hangs such a connection, or spins its service thread for ever, when a
    /// request is pipelined behind one answered by a route; closing after the answer avoids both.
    @Test func requestsPipelinedBehindARouteNeverWedgeTheServer() throws {
        let server = try RunningTestServer()
        let clock = ContinuousClock()
        let started = clock.now
        for first in ["HEAD /healthz", "GET /healthz", "GET /api/nope", "GET /missing.js"] {
            let connection = try TestHTTPConnection(port: server.port)
            try connection.send("\(first) HTTP/1.1\r\nHost: x\r\n\r\n"
                                + "POST /api/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
                                + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try connection.readResponse(hasBody: !first.hasPrefix("HEAD"))
            #expect(response[header: "connection"] == "close", "\(first)")
            #expect(connection.isClosedByPeer(), "\(first)")
            #expect(try server.get("/healthz").status == 200, "\(first)")
        }
        #expect(clock.now - started < .seconds(2))
    }

    @Test func handlersReceiveTheRequestBodyAndLargeResponsesArriveWhole() throws {
        var router = HTTPRouter.standard
        router.add(.post, "/api/v1/echo") { request in
            HTTPResponse(status: 200, contentType: "application/octet-stream",
                         body: request.body + request.body)
        }
        let server = try RunningTestServer(router: router)
        let body = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

        let response = try TestHTTPConnection(port: server.port).request("POST", "/api/v1/echo", body: body)
        #expect(response.status == 200)
        #expect(response.body == body + body)
    }

    @Test func aBodyOverTheLimitIsRefusedWith413AndTheConnectionClosed() throws {
        let server = try RunningTestServer()
        let connection = try TestHTTPConnection(port: server.port)
        try connection.send("POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(HTTPRequest.maximumBodySize + 1)\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect((response.json?["error"] as? [String: Any])?["code"] as? String == "payload_too_large")
        #expect(connection.isClosedByPeer())
    }
}

@Suite("HTTPRouter")
struct HTTPRouterTests {
    @Test func theStandardRouterClaimsTheAPIAndHealthz() {
        #expect(HTTPRouter.standard.mountpoints == ["/api", "/healthz"])
    }

    @Test func routesUnderTheAPINeedNoMountOfTheirOwn() {
        var router = HTTPRouter.standard
        router.add(.get, "/api/v1/leaderboards") { _ in .json("[]") }
        router.add(.get, "/ws") { _ in .json("{}") }
        #expect(router.mountpoints == ["/api", "/healthz", "/ws"])
    }

    @Test func headIsAnsweredByTheGetRoute() {
        let response = HTTPRouter.standard.response(for: HTTPRequest(method: .head, path: "/healthz"))
        #expect(response.status == 200)
    }

    @Test func unknownPathsOutsideTheAPIGetThePage() {
        let response = HTTPRouter.standard.response(for: HTTPRequest(method: .get, path: "/nope.html"))
        #expect(response.status == 404)
        #expect(response.contentType.hasPrefix("text/html"))
    }

    @Test func errorMessagesAreEscapedIntoValidJSON() throws {
        let response = HTTPResponse.error(status: 400, code: "bad_input", message: #"a "quoted" \ path/with/slashes"#)
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let error = try #require(object?["error"] as? [String: String])
        #expect(error == ["code": "bad_input", "message": #"a "quoted" \ path/with/slashes"#])
        #expect(response.headers.contains(HTTPHeader("cache-control", "no-store")))
    }
}
