#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a node may be called (`--node-id`), and the name a node gets when none is given.
public enum ClusterNodeName {
    /// Letters, digits, `.`, `_` and `-`: safe in a log line, a metric label and a NOTIFY payload.
    public static func isAllowed(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-")
    }

    /// The machine's host name cut to the allowed characters, or `node` when it has none.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "node" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }.filter(isAllowed).prefix(64), as: UTF8.self)
        return name.isEmpty ? "node" : name
    }
}

extension ServerConfiguration {
    /// `nodeID`, or the host name when it is empty.
    public var resolvedNodeID: String { nodeID.isEmpty ? ClusterNodeName.hostName() : nodeID }
}
