/// Builds a client message in a connection's send buffer without allocating. Bytes past
/// `capacity` are dropped (and `overflowed` set); messages here are under 200 bytes.
struct MessageWriter {
    private let start: UnsafeMutableRawPointer
    private let capacity: Int
    private(set) var count = 0
    private(set) var overflowed = false

    init(_ start: UnsafeMutableRawPointer, capacity: Int) {
        self.start = start
        self.capacity = capacity
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    mutating func append(bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    mutating func append(integer value: Int) {
        if value < 0 { append("-") }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var length = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[buffer.count - 1 - length] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                length += 1
            } while magnitude > 0
            append(UnsafeRawBufferPointer(rebasing: buffer[(buffer.count - length)...]))
        }
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let room = capacity - count
        let taken = min(room, bytes.count)
        if taken < bytes.count { overflowed = true }
        if taken > 0, let base = bytes.baseAddress {
            (start + count).copyMemory(from: base, byteCount: taken)
            count += taken
        }
    }
}
