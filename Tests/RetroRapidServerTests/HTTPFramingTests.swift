import Testing
@testable import RetroRapidServer

/// The framing rules every request head is held to (RFC 9112 §3.2, §6.1, §6.3; RFC 9110 §8.6),
/// and the limits on its size, without a server.
@Suite struct HTTPFramingTests {
    let limits = HTTPRequestLimits()

    func refusal(_ head: HTTPRequestHead) -> APIError? {
        do throws(APIError) {
            _ = try HTTPFraming.bodyLength(of: head, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func aPlainContentLengthIsTheBodyLength() throws {
        #expect(try HTTPFraming.bodyLength(of: HTTPRequestHead(contentLength: "42"), limits: limits) == 42)
        #expect(try HTTPFraming.bodyLength(of: HTTPRequestHead(), limits: limits) == 0)
        #expect(try HTTPFraming.bodyLength(of: HTTPRequestHead(contentLength: "0"), limits: limits) == 0)
        // Too large to hold: the body limit refuses it later (413), not a crash here.
        #expect(try HTTPFraming.bodyLength(of: HTTPRequestHead(contentLength: "99999999999999999999999"),
                                           limits: limits) == Int.max)
    }

    @Test(arguments: ["+16", "-1", "16 16", "16 17", "16,16", " 16", "0x10", "", "1e3", "١٦"])
    func aContentLengthThatIsNotOneNumberIsRefused(_ value: String) {
        let refused = refusal(HTTPRequestHead(contentLength: value))
        #expect(refused?.status == 400)
        #expect(refused?.field == "content-length")
    }

    @Test func transferEncodingIsNeverTakenWithAContentLength() {
        for coding in ["chunked", "xchunked", "gzip, chunked"] {
            #expect(refusal(HTTPRequestHead(contentLength: "5", transferEncoding: coding))?.status == 400)
        }
    }

    @Test func transferEncodingNotEndingInChunkedIsRefused() {
        for coding in ["xchunked", "gzip", "chunked, gzip", "chunkedx", ""] {
            #expect(refusal(HTTPRequestHead(transferEncoding: coding))?.status == 400, "\(coding)")
        }
    }

    @Test func aChunkedBodyIsAnswered411() {
        for coding in ["chunked", "Chunked", "gzip, chunked", "gzip chunked"] {
            #expect(refusal(HTTPRequestHead(transferEncoding: coding))?.code == "length_required", "\(coding)")
        }
        // HTTP/1.0 has no transfer codings: 400.
        #expect(refusal(HTTPRequestHead(version: "HTTP/1.0", transferEncoding: "chunked"))?.status == 400)
    }

    @Test func http11NeedsOneHost() {
        #expect(refusal(HTTPRequestHead(host: nil))?.field == "host")
        #expect(refusal(HTTPRequestHead(host: ""))?.field == "host")
        #expect(refusal(HTTPRequestHead(host: "a b"))?.field == "host")
        // A combining mark after the separator makes one Character of both (fuzz-http-query).
        for host in ["a \u{301}b", "a,\u{301}b", "a \u{65A}"] {
            #expect(refusal(HTTPRequestHead(host: host))?.field == "host", "\(host.unicodeScalars.map(\.value))")
        }
        #expect(refusal(HTTPRequestHead(version: "HTTP/1.0", host: nil)) == nil)
        #expect(refusal(HTTPRequestHead(isHTTP2: true, version: nil, host: nil)) == nil)
    }

    @Test func otherVersionsAreRefused() {
        #expect(refusal(HTTPRequestHead(version: "HTTP/1.2"))?.status == 505)
        // No version at all is no version to refuse: RequestLineWithoutAVersionTests.
        #expect(refusal(HTTPRequestHead(version: nil))?.status == 400)
    }

    @Test func http2CarriesNoTransferEncoding() {
        #expect(refusal(HTTPRequestHead(isHTTP2: true, version: nil, transferEncoding: "chunked"))?.status == 400)
    }

    @Test func sizesAreBounded() {
        #expect(refusal(HTTPRequestHead(targetBytes: limits.maxTargetBytes)) == nil)
        #expect(refusal(HTTPRequestHead(targetBytes: limits.maxTargetBytes + 1))?.status == 414)
        #expect(refusal(HTTPRequestHead(headerBytes: limits.maxHeaderBytes)) == nil)
        #expect(refusal(HTTPRequestHead(headerBytes: limits.maxHeaderBytes + 1))?.status == 431)
    }

    @Test func aNULInThePathIsRefused() {
        #expect(refusal(HTTPRequestHead(path: Array("/api/\0x".utf8)))?.field == "path")
    }

    @Test func ourLimitsFitInsideLibwebsocketsBuffer() {
        // Otherwise libwebsockets would drop a head before our answers could be given.
        #expect(limits.maxTargetBytes + limits.maxHeaderBytes < limits.headerBufferBytes)
        #expect(limits.headerBufferBytes <= Int(UInt16.max))
    }
}

/// Query pieces as libwebsockets hands them over: every one is kept, or the request refused.
@Suite struct HTTPQueryParserTests {
    let limits = HTTPRequestLimits()

    func items(_ pieces: [String]) throws(APIError) -> [HTTPQueryItem] {
        try HTTPQueryParser.items(fromPieces: pieces.map { Array($0.utf8) }, limits: limits)
    }

    @Test func piecesBecomeItemsInOrder() throws {
        #expect(try items(["a=1", "b", "c=x=y", "=v", ""]) == [
            HTTPQueryItem("a", "1"), HTTPQueryItem("b", ""), HTTPQueryItem("c", "x=y"), HTTPQueryItem("", "v"),
        ])
    }

    @Test func aLongValueIsKeptWhole() throws {
        let long = String(repeating: "x", count: 3000)
        #expect(try items(["pad=" + long, "limit=abc"]) == [HTTPQueryItem("pad", long), HTTPQueryItem("limit", "abc")])
    }

    @Test func tooManyParametersAreRefusedNotDropped() throws {
        let pieces = (0..<limits.maxQueryParameters).map { "p\($0)=1" }
        #expect(try items(pieces).count == limits.maxQueryParameters)
        #expect(throws: APIError.self) { try items(pieces + ["one=more"]) }
        // Empty pieces (a&&b) name nothing and do not count.
        #expect(try items(pieces + ["", ""]).count == limits.maxQueryParameters)
    }

    @Test func aNULIsRefused() {
        #expect(throws: APIError.self) { try items(["a=\0"]) }
    }
}

/// A request line that ended before its version: libwebsockets ends it at a CR or LF in the
/// target, raw or decoded from %0D / %0A.
@Suite struct RequestLineWithoutAVersionTests {
    func refusal(_ head: HTTPRequestHead) -> APIError? {
        do throws(APIError) {
            _ = try HTTPFraming.bodyLength(of: head, limits: HTTPRequestLimits())
            return nil
        } catch {
            return error
        }
    }

    @Test func isABadRequestOnTheTargetNotA505() {
        let refused = refusal(HTTPRequestHead(version: nil, path: Array("/api/v1/rooms/A".utf8)))
        #expect(refused?.status == 400 && refused?.code == "bad_request" && refused?.field == "target")
        #expect(refused?.message.contains("CR or LF") == true)
    }

    @Test func anotherVersionIsStill505() {
        for version in ["HTTP/1.2", "HTTP/0.9", "HTTP/2.0", "FOO"] {
            #expect(refusal(HTTPRequestHead(version: version))?.status == 505, "\(version)")
        }
    }
}

/// Per-address counting of HTTP connections, and each connection's request clock.
@Suite struct HTTPConnectionTrackerTests {
    func attributed(_ tracker: inout HTTPConnectionTracker<Int>, _ key: Int, to address: String) -> Bool {
        tracker.attribute(key, to: address)
    }

    @Test func anAddressMayHaveSoManyConnections() {
        var tracker = HTTPConnectionTracker<Int>(maxConnectionsPerAddress: 2)
        #expect(attributed(&tracker, 1, to: "a"))
        #expect(attributed(&tracker, 2, to: "a"))
        #expect(attributed(&tracker, 2, to: "a"))  // the same connection again: still two
        #expect(!attributed(&tracker, 3, to: "a"))
        #expect(attributed(&tracker, 3, to: "b"))
        tracker.closed(1)
        #expect(attributed(&tracker, 4, to: "a"))
        #expect(tracker.connections(of: "a") == 2)
    }

    @Test func anIPv6ClientCountsAsItsSlash64AndAMappedAddressAsItsIPv4Address() {
        var tracker = HTTPConnectionTracker<Int>(maxConnectionsPerAddress: 2)
        #expect(attributed(&tracker, 1, to: "2001:db8:1:2::1"))
        #expect(attributed(&tracker, 2, to: "2001:db8:1:2:ffff:ffff:ffff:fffe"))
        #expect(!attributed(&tracker, 3, to: "2001:db8:1:2::3"))
        #expect(tracker.connections(of: "2001:db8:1:2:abcd::9") == 2)
        #expect(attributed(&tracker, 3, to: "2001:db8:1:3::1"))  // the next /64: someone else
        #expect(attributed(&tracker, 4, to: "192.0.2.1"))
        #expect(attributed(&tracker, 5, to: "::ffff:192.0.2.1"))
        #expect(!attributed(&tracker, 6, to: "192.0.2.1"))
        tracker.closed(1)
        #expect(attributed(&tracker, 6, to: "2001:db8:1:2::6"))
    }

    @Test func aConnectionMovesToEachRequestsClient() {
        // A proxy reusing one upstream connection for several clients.
        var tracker = HTTPConnectionTracker<Int>(maxConnectionsPerAddress: 1)
        #expect(attributed(&tracker, 1, to: "a"))
        #expect(attributed(&tracker, 1, to: "b"))
        #expect(tracker.connections(of: "a") == 0)
        #expect(attributed(&tracker, 2, to: "a"))
        // Refused: nothing moved.
        #expect(!attributed(&tracker, 1, to: "a"))
        #expect(tracker.connections(of: "b") == 1)
    }

    @Test func theRequestClockStartsAtOpenAndAfterEachAnswer() {
        var tracker = HTTPConnectionTracker<Int>(maxConnectionsPerAddress: 1)
        tracker.opened(1, now: 100)
        #expect(tracker.requestStart(1, now: 500) == 100)
        tracker.requestEnded(1, now: 300, bytes: nil)
        #expect(tracker.requestStart(1, now: 500) == 300)
        #expect(tracker.requestStart(2, now: 500) == 500)
        tracker.closed(1)
        #expect(tracker.requestStart(1, now: 700) == 700)
    }
}

/// What a head libwebsockets dropped is logged (or, on a header timeout, answered) as.
@Suite struct UnparsedHeadTests {
    let limits = HTTPRequestLimits()

    @Test func theLikeliestReasonIsChosen() {
        let timeout = Int64(limits.headerTimeoutSeconds) * 1_000_000
        #expect(HTTPFraming.unparsedHeadRefusal(bytesReceived: 10, elapsedMicroseconds: timeout, limits: limits).status == 408)
        #expect(HTTPFraming.unparsedHeadRefusal(bytesReceived: UInt64(limits.headerBufferBytes) + 100,
                                                elapsedMicroseconds: 1000, limits: limits).status == 431)
        #expect(HTTPFraming.unparsedHeadRefusal(bytesReceived: 40, elapsedMicroseconds: 1000, limits: limits).status == 400)
    }

    @Test func onlyAHeadThatCameAndGotNothingCounts() {
        typealias Counts = HTTPConnectionTracker<Int>.ByteCounts
        var tracker = HTTPConnectionTracker<Int>(maxConnectionsPerAddress: 1)
        tracker.opened(1, now: 0)
        #expect(!tracker.droppedHeadUnanswered(1, bytes: Counts(received: 0, sent: 0)))  // sent nothing
        #expect(tracker.droppedHeadUnanswered(1, bytes: Counts(received: 40, sent: 0)))
        #expect(!tracker.droppedHeadUnanswered(1, bytes: Counts(received: 40, sent: 200)))  // answered (a 403 page)
        tracker.headArrived(1)
        #expect(!tracker.droppedHeadUnanswered(1, bytes: Counts(received: 40, sent: 0)))
        tracker.requestEnded(1, now: 5, bytes: Counts(received: 40, sent: 500))
        #expect(!tracker.droppedHeadUnanswered(1, bytes: Counts(received: 40, sent: 500)))  // idle keep-alive
        #expect(tracker.droppedHeadUnanswered(1, bytes: Counts(received: 90, sent: 500)))
        #expect(tracker.bytesReceivedSinceRequestBegan(1, bytes: Counts(received: 90, sent: 500)) == 50)
        tracker.requestEnded(1, now: 6, bytes: nil)  // counts unknown: stay silent
        #expect(!tracker.droppedHeadUnanswered(1, bytes: Counts(received: 900, sent: 500)))
    }
}
