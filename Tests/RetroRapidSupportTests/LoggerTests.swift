import Foundation
import Testing
import RetroRapidSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct LoggerTests {
    /// 2026-11-29T22:41:10.125Z; .125 is exact in binary, so no rounding question in the expected text.
    static let fixedDate = Date(timeIntervalSince1970: 1_795_992_070.125)

    static func record(_ message: String = "match started", level: Logger.Level = .info, metadata: [String: String] = [:]) -> LogRecord {
        LogRecord(timestamp: fixedDate, level: level, label: "retrorapid.server", message: message, metadata: metadata)
    }

    // MARK: Levels

    @Test func levelsAreOrderedFromTraceToCritical() {
        #expect(Logger.Level.allCases == [.trace, .debug, .info, .notice, .warning, .error, .critical])
        #expect(Logger.Level.allCases.sorted(by: >).first == .critical)
        #expect(Logger.Level.debug < .info)
        #expect(Logger.Level.error > .warning)
    }

    @Test func levelsParseCaseInsensitivelyAndRejectUnknownNames() {
        #expect(Logger.Level("info") == .info)
        #expect(Logger.Level("WARNING") == .warning)
        #expect(Logger.Level("Critical") == .critical)
        #expect(Logger.Level("verbose") == nil)
        #expect(Logger.Level("") == nil)
    }

    @Test func recordsBelowTheLevelAreDroppedAndOthersKept() {
        let sink = InMemoryLogSink()
        let logger = Logger(label: "test", logLevel: .notice, sink: sink)
        logger.trace("t")
        logger.debug("d")
        logger.info("i")
        logger.notice("n")
        logger.warning("w")
        logger.error("e")
        logger.critical("c")
        #expect(sink.records.map(\.message) == ["n", "w", "e", "c"])
        #expect(sink.records.map(\.level) == [.notice, .warning, .error, .critical])
    }

    @Test func filteredMessagesAreNeverEvaluated() {
        let sink = InMemoryLogSink()
        let logger = Logger(label: "test", logLevel: .info, sink: sink)
        var evaluations = 0
        func expensive() -> String {
            evaluations += 1
            return "expensive"
        }
        logger.debug(expensive())
        logger.trace(expensive())
        #expect(evaluations == 0)
        logger.info(expensive())
        #expect(evaluations == 1)
        #expect(sink.records.map(\.message) == ["expensive"])
    }

    // MARK: Metadata

    @Test func subscriptReadsWritesAndRemovesMetadata() {
        var logger = Logger(label: "test", sink: InMemoryLogSink())
        logger[metadataKey: "ws.connection.id"] = "c-17"
        #expect(logger[metadataKey: "ws.connection.id"] == "c-17")
        #expect(logger.metadata == ["ws.connection.id": "c-17"])
        logger[metadataKey: "ws.connection.id"] = nil
        #expect(logger.metadata.isEmpty)
    }

    @Test func callMetadataIsMergedOverLoggerMetadataForThatRecordOnly() {
        let sink = InMemoryLogSink()
        var logger = Logger(label: "test", sink: sink)
        logger[metadataKey: "ws.connection.id"] = "c-17"
        logger[metadataKey: "game.id"] = "g-1"
        logger.info("moved", metadata: ["game.id": "g-2", "move.lane": "3"])
        logger.info("again")
        #expect(sink.records[0].metadata == ["ws.connection.id": "c-17", "game.id": "g-2", "move.lane": "3"])
        #expect(sink.records[1].metadata == ["ws.connection.id": "c-17", "game.id": "g-1"])
    }

    @Test func copiesOfALoggerKeepTheirOwnMetadata() {
        let sink = InMemoryLogSink()
        let server = Logger(label: "server", sink: sink)
        var session = server
        session[metadataKey: "ws.connection.id"] = "c-1"
        server.info("from server")
        session.info("from session")
        #expect(sink.records.map(\.metadata) == [[:], ["ws.connection.id": "c-1"]])
    }

    // MARK: Text format

    @Test func textLineHasTimestampLevelLabelMessageAndSortedMetadata() {
        let line = LogFormat.text.render(Self.record(metadata: [
            "ws.connection.id": "c-17", "game.id": "g-9", "b": "2", "a": "1", "z.last": "x",
        ]))
        #expect(line == "2026-11-29T22:41:10.125Z info retrorapid.server: match started a=1 b=2 game.id=g-9 ws.connection.id=c-17 z.last=x")
    }

    @Test func textQuotesValuesWithSpacesQuotesEqualsOrNothing() {
        let line = LogFormat.text.render(Self.record(metadata: [
            "player.name": #"Ada "The Countess" Lovelace"#,
            "query": "a=b",
            "empty": "",
            "path": #"C:\games"#,
        ]))
        #expect(line.hasSuffix(#" empty="" path="C:\\games" player.name="Ada \"The Countess\" Lovelace" query="a=b""#))
    }

    @Test func textKeepsEachRecordOnOneLine() {
        let line = LogFormat.text.render(Self.record("first\nsecond", metadata: ["reason": "bad\r\nframe\tend"]))
        #expect(!line.contains("\n") && !line.contains("\r"))
        #expect(line.contains(#"first\nsecond"#))
        #expect(line.hasSuffix(#"reason="bad\r\nframe\tend""#))
    }

    // MARK: JSON format

    @Test func jsonLineHasFixedFieldsFirstThenSortedMetadata() {
        let line = LogFormat.json.render(Self.record(level: .warning, metadata: ["z": "1", "game.id": "g-9", "a": "0"]))
        #expect(line == #"{"ts":"2026-11-29T22:41:10.125Z","level":"warning","label":"retrorapid.server","msg":"match started","a":"0","game.id":"g-9","z":"1"}"#)
    }

    @Test func jsonEscapesQuotesBackslashesAndControlCharacters() {
        let line = LogFormat.json.render(Self.record("say \"hi\"\nthen \\ leave\t\u{1}"))
        #expect(line.contains(#""msg":"say \"hi\"\nthen \\ leave\t\u0001""#))
        #expect(!line.contains("\n"))
    }

    @Test func jsonKeepsUnicodeButEscapesLineSeparators() {
        let line = LogFormat.json.render(Self.record("café 🏎️ lane\u{2028}two"))
        #expect(line.contains(#""msg":"café 🏎️ lane\u2028two""#))
    }

    @Test func jsonRoundTripsThroughAParser() throws {
        let message = "quote \" backslash \\ newline \n tab \t bell \u{7} nul \u{0} e\u{301} 日本 🏁 \u{2029}"
        let metadata = ["player.name": "Zoë \"Z\" O'Neil", "ws.connection.id": "c\n1"]
        let line = LogFormat.json.render(Self.record(message, metadata: metadata))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["msg"] == message)
        #expect(object["player.name"] == metadata["player.name"])
        #expect(object["ws.connection.id"] == metadata["ws.connection.id"])
        #expect(object["level"] == "info")
        #expect(object["label"] == "retrorapid.server")
        #expect(object["ts"] == "2026-11-29T22:41:10.125Z")
    }

    @Test func jsonMetadataCannotOverwriteTheFixedFields() throws {
        let line = LogFormat.json.render(Self.record(metadata: ["msg": "spoofed", "level": "critical"]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["msg"] == "match started")
        #expect(object["level"] == "info")
        #expect(object["metadata.msg"] == "spoofed")
        #expect(object["metadata.level"] == "critical")
    }

    // MARK: Sinks

    @Test func formatIsChosenWhenTheLoggerIsMade() {
        let json = Logger(label: "a", format: .json)
        let text = Logger(label: "b")
        #expect((json.sink as? LineLogSink)?.format == .json)
        #expect((text.sink as? LineLogSink)?.format == .text)
        #expect((text.sink as? LineLogSink)?.output === LogOutput.standardError)
    }

    @Test func lineSinkWritesOneRenderedLinePerRecord() throws {
        let lines = try Self.capture { output in
            let logger = Logger(label: "pipe", metadata: ["k": "v w"], sink: LineLogSink(format: .text, output: output))
            logger.info("one")
            logger.debug("skipped")
            logger.error("two")
        }
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix(#" info pipe: one k="v w""#))
        #expect(lines[1].hasSuffix(#" error pipe: two k="v w""#))
    }

    /// Lines longer than PIPE_BUF are not written atomically by the kernel, so without the
    /// output's lock, concurrent writers would splice their bytes together.
    @Test func concurrentWritesNeverInterleaveLines() throws {
        let writers = 8
        let linesPerWriter = 40
        let lines = try Self.capture { output in
            DispatchQueue.concurrentPerform(iterations: writers) { writer in
                let letter = String(UnicodeScalar(UInt8(ascii: "a") + UInt8(writer)))
                let line = String(repeating: letter, count: 20_000)
                for _ in 0..<linesPerWriter {
                    output.write(line: line)
                }
            }
        }
        #expect(lines.count == writers * linesPerWriter)
        let splicedLines = lines.filter { line in line.count != 20_000 || Set(line).count != 1 }.count
        #expect(splicedLines == 0)
    }

    /// Runs `body` with an output on a pipe and returns the lines it wrote, read concurrently so
    /// the writers never block on a full pipe.
    static func capture(_ body: (LogOutput) -> Void) throws -> [String] {
        var descriptors: [Int32] = [0, 0]
        try #require(pipe(&descriptors) == 0)
        let reader = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true)
        let collected = Collected()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            collected.data = reader.readDataToEndOfFile()
            done.signal()
        }
        body(LogOutput(fileDescriptor: descriptors[1]))
        close(descriptors[1])
        done.wait()
        let text = String(decoding: collected.data, as: UTF8.self)
        #expect(text.hasSuffix("\n"))
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Handed from the reader thread to the test after the semaphore, which orders the accesses.
    final class Collected: @unchecked Sendable {
        var data = Data()
    }
}
