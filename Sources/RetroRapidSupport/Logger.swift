import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// swift-log's shape without the package: a value type, so a session can copy the server's logger
/// and add `ws.connection.id` without touching anyone else's. Only `main` should make the root one;
/// libraries take a logger as a parameter.
public struct Logger: Sendable {
    /// Ordered by severity, so `level >= logLevel` decides what is written.
    public enum Level: String, Sendable, CaseIterable, Comparable, LosslessStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        /// Case-insensitive so `RETRORAPID_LOG_LEVEL=INFO` works as people expect.
        public init?(_ description: String) {
            guard let level = Level(rawValue: description.lowercased()) else { return nil }
            self = level
        }

        public var description: String { rawValue }

        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.severity < rhs.severity
        }

        private var severity: Int { Level.allCases.firstIndex(of: self)! }
    }

    public let label: String
    public var logLevel: Level
    /// Attached to every record. Use dotted keys (`ws.connection.id`) rather than pasting values
    /// into messages, so lines can be filtered by key.
    public var metadata: [String: String]
    public let sink: any LogSink

    public init(label: String, logLevel: Level = .info, metadata: [String: String] = [:], sink: any LogSink) {
        self.label = label
        self.logLevel = logLevel
        self.metadata = metadata
        self.sink = sink
    }

    /// Writes to standard error, one line per record.
    public init(label: String, logLevel: Level = .info, metadata: [String: String] = [:], format: LogFormat = .text) {
        self.init(label: label, logLevel: logLevel, metadata: metadata, sink: LineLogSink(format: format))
    }

    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The message is an autoclosure so a filtered-out `trace` costs a comparison, not a
    /// string interpolation. Per-call metadata wins over the logger's for the same key.
    public func log(level: Level, _ message: @autoclosure () -> String, metadata extra: [String: String]? = nil) {
        guard level >= logLevel else { return }
        var merged = metadata
        if let extra {
            merged.merge(extra) { _, new in new }
        }
        sink.write(LogRecord(timestamp: Date(), level: level, label: label, message: message(), metadata: merged))
    }

    public func trace(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .trace, message(), metadata: metadata)
    }

    public func debug(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .debug, message(), metadata: metadata)
    }

    public func info(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .info, message(), metadata: metadata)
    }

    public func notice(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .notice, message(), metadata: metadata)
    }

    public func warning(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .warning, message(), metadata: metadata)
    }

    public func error(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .error, message(), metadata: metadata)
    }

    public func critical(_ message: @autoclosure () -> String, metadata: [String: String]? = nil) {
        log(level: .critical, message(), metadata: metadata)
    }
}

/// One log event after filtering, with the logger's and the call's metadata already merged.
public struct LogRecord: Sendable, Equatable {
    public var timestamp: Date
    public var level: Logger.Level
    public var label: String
    public var message: String
    public var metadata: [String: String]

    public init(timestamp: Date, level: Logger.Level, label: String, message: String, metadata: [String: String]) {
        self.timestamp = timestamp
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
    }
}

/// Where records go, like swift-log's `LogHandler`. The logger has already filtered by level.
public protocol LogSink: Sendable {
    func write(_ record: LogRecord)
}

/// Text is for people at a terminal; JSON lines are for log collectors.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json

    /// One line without the trailing newline. Keys are sorted so equal records render equally.
    public func render(_ record: LogRecord) -> String {
        let timestamp = record.timestamp.formatted(Self.timestampStyle)
        switch self {
        case .text:
            var line = "\(timestamp) \(record.level) \(Self.singleLine(record.label)): \(Self.singleLine(record.message))"
            for key in record.metadata.keys.sorted() {
                line += " \(Self.logfmt(key))=\(Self.logfmt(record.metadata[key]!))"
            }
            return line
        case .json:
            var fields = [
                ("ts", timestamp),
                ("level", record.level.rawValue),
                ("label", record.label),
                ("msg", record.message),
            ]
            let reserved = Set(fields.map(\.0))
            // A metadata key named like a fixed field is renamed, never allowed to replace it.
            let extra = record.metadata.map { key, value in
                (reserved.contains(key) ? "metadata.\(key)" : key, value)
            }
            fields += extra.sorted { $0.0 < $1.0 }
            let body = fields.map { "\(Self.jsonString($0.0)):\(Self.jsonString($0.1))" }
            return "{\(body.joined(separator: ","))}"
        }
    }

    /// UTC with milliseconds: sortable as text and unambiguous across hosts.
    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// Messages and labels stay unquoted for readability, but a newline must not start a fake record.
    static func singleLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += escapedControl(scalar)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Bare when unambiguous; otherwise double-quoted with `\"`, `\\` and control escapes.
    static func logfmt(_ text: String) -> String {
        let needsQuotes = text.isEmpty || text.unicodeScalars.contains {
            $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || isControl($0)
        }
        guard needsQuotes else { return text }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where isControl(scalar): result += escapedControl(scalar)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// RFC 8259 escaping. U+2028/2029 are escaped too, so a line can be pasted into JavaScript.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\u{2028}": result += "\\u2028"
            case "\u{2029}": result += "\\u2029"
            case _ where scalar.value < 0x20: result += escapedControl(scalar)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    private static func escapedControl(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        case "\u{8}": "\\b"
        case "\u{C}": "\\f"
        default: "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
            + String(scalar.value, radix: 16)
        }
    }
}

/// A file descriptor shared by every sink that writes to it. The lock lives here, not in the sink,
/// so two loggers writing to standard error still can't interleave halves of their lines (a pipe
/// only guarantees atomic writes up to PIPE_BUF, and a long line may need several `write` calls).
public final class LogOutput: Sendable {
    public static let standardError = LogOutput(fileDescriptor: STDERR_FILENO)

    private let fileDescriptor: Int32
    private let lock = Mutex(())

    /// The descriptor is borrowed: the caller keeps it open for as long as the output is used.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Appends a newline. Failures are dropped: there is nowhere left to report a logging error.
    public func write(line: String) {
        let bytes = Array((line + "\n").utf8)
        lock.withLock { _ in
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Self.systemWrite(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }
    }

    private static func systemWrite(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, pointer, count)
        #else
        Darwin.write(fd, pointer, count)
        #endif
    }
}

/// The default sink: renders each record in one format and writes it as one line.
public struct LineLogSink: LogSink {
    public let format: LogFormat
    public let output: LogOutput

    public init(format: LogFormat, output: LogOutput = .standardError) {
        self.format = format
        self.output = output
    }

    public func write(_ record: LogRecord) {
        output.write(line: format.render(record))
    }
}

/// Keeps records in memory so tests, in any target, can assert on what was logged.
public final class InMemoryLogSink: LogSink {
    private let storage = Mutex<[LogRecord]>([])

    public init() {}

    public func write(_ record: LogRecord) {
        storage.withLock { $0.append(record) }
    }

    public var records: [LogRecord] {
        storage.withLock { $0 }
    }

    public func lines(format: LogFormat) -> [String] {
        records.map(format.render)
    }
}
