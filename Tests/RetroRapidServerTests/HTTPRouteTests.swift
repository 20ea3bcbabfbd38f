import Foundation
import Synchronization
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
        #expect(response?.status == 200)
    }

    @Test func unknownPathsOutsideTheAPIGetThePage() {
        let response = HTTPRouter.standard.response(for: HTTPRequest(method: .get, path: "/nope.html"))
        #expect(response?.status == 404)
        #expect(response?.contentType.hasPrefix("text/html") == true)
    }

    @Test func pathParametersAreMatchedAndLiteralSegmentsWin() {
        var router = HTTPRouter()
        router.add(.get, "/api/v1/link-codes/{id}") { request in .json(#"{"id":"\#(request.pathParameters["id"] ?? "")"}"#) }
        router.add(.post, "/api/v1/link-codes/claim") { _ in .json(#"{"claim":true}"#) }
        router.add(.get, "/api/v1/boards/{level}/{period}") { request in
            .json(#"{"board":"\#(request.pathParameters["level"] ?? "")-\#(request.pathParameters["period"] ?? "")"}"#)
        }
        func answer(_ method: HTTPMethod, _ path: String) -> HTTPResponse? {
            router.response(for: HTTPRequest(method: method, path: path))
        }
        #expect(answer(.get, "/api/v1/link-codes/42").map { String(decoding: $0.body, as: UTF8.self) } == #"{"id":"42"}"#)
        #expect(answer(.post, "/api/v1/link-codes/claim").map { String(decoding: $0.body, as: UTF8.self) } == #"{"claim":true}"#)
        #expect(answer(.get, "/api/v1/boards/fast/today").map { String(decoding: $0.body, as: UTF8.self) } == #"{"board":"fast-today"}"#)
        // A parameter takes exactly one non-empty segment.
        #expect(answer(.get, "/api/v1/boards/fast")?.status == 404)
        #expect(answer(.get, "/api/v1/boards/fast/today/extra")?.status == 404)
        #expect(answer(.get, "/api/v1/link-codes/")?.status == 404)
        // The literal route's path with another method: 405 naming only its own methods.
        let wrong = answer(.delete, "/api/v1/link-codes/claim")
        #expect(wrong?.status == 405)
        #expect(wrong?.headers.contains(HTTPHeader("allow", "POST")) == true)
    }

    @Test func theRouteListNamesEveryTemplateAndMethod() {
        var router = HTTPRouter.standard
        router.add(.get, "/api/v1/devices") { _ in .json("[]") }
        router.add(.delete, "/api/v1/devices/{id}") { _ in .json("{}") }
        #expect(router.routes.map { "\($0.method.rawValue) \($0.path)" }
                == ["GET /api/v1/devices", "DELETE /api/v1/devices/{id}", "GET /healthz"])
    }

    @Test func everyAnsweredRequestIsObservedWithItsRouteTemplate() {
        var router = HTTPRouter()
        router.add(.get, "/api/v1/devices/{id}") { _ in .json("{}") }
        let seen = Mutex<[String]>([])
        router.observer = { observation in
            seen.withLock { $0.append("\(observation.route) \(observation.response.status)") }
        }
        _ = router.response(for: HTTPRequest(method: .get, path: "/api/v1/devices/7"))
        _ = router.response(for: HTTPRequest(method: .get, path: "/api/v1/nope"))
        _ = router.response(for: HTTPRequest(method: .put, path: "/api/v1/devices/7"))
        #expect(seen.withLock { $0 } == ["/api/v1/devices/{id} 200", "unmatched 404", "/api/v1/devices/{id} 405"])
    }

    @Test func errorMessagesAreEscapedIntoValidJSON() throws {
        let response = HTTPResponse.error(status: 400, code: "bad_input", message: #"a "quoted" \ path/with/slashes"#)
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let error = try #require(object?["error"] as? [String: String])
        #expect(error == ["code": "bad_input", "message": #"a "quoted" \ path/with/slashes"#])
        #expect(response.headers.contains(HTTPHeader("cache-control", "no-store")))
    }
}
