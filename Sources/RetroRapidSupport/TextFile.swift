#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small text file (the env file) read with open(2) and read(2) to its end. Foundation's
/// `String(contentsOfFile:)` sizes the file first, and on a character device or a pipe
/// (`RETRORAPID_ENV_FILE=/dev/null`, a shell's `<(…)`) it fails with a permission message that
/// is not true; reading to end-of-file works for every kind of file and says the real reason.
public enum TextFile {
    public struct ReadError: Error, Equatable, CustomStringConvertible {
        /// Why, as a clause that follows the file's name: "can't be read: " and the system's
        /// reason (`strerror`), or what the file is not.
        public let reason: String
        public var description: String { reason }
    }

    /// The most an env file may hold: far past any real one, short of a mistake (a disk image
    /// named by accident) filling memory.
    public static let maximumBytes = 1 << 20

    /// The file's text. Throws `ReadError` when it cannot be opened or read, is over
    /// `maximumBytes`, or is not UTF-8.
    public static func read(_ path: String) throws(ReadError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReadError(reason: "can't be read: " + String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(reason: "can't be read: " + String(cString: strerror(errno)))
            }
            if count == 0 { break }
            guard bytes.count + count <= maximumBytes else {
                throw ReadError(reason: "is over \(maximumBytes) bytes, too large for a settings file")
            }
            bytes += chunk[..<count]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ReadError(reason: "is not UTF-8 text")
        }
        return text
    }
}
