/// Writes JSON straight into the bytes that go to `lws_write`.
///
/// Why not `JSONEncoder`: a step message goes to every running game several times a second
/// (the aim is many thousands of games on one core), and the encoder's boxing and dictionaries cost
/// far more than the message is worth. This writes into one array that starts with
/// libwebsockets' `LWS_PRE` headroom, so the message is sent without another copy. Commas are
/// tracked per nesting level in a bit mask, so writing allocates nothing but the array.
struct JSONWriter {
    private(set) var bytes: [UInt8]
    /// Where the JSON starts (after the headroom).
    let headroom: Int
    /// Bit n set: the container at depth n has a member already, so the next needs a comma.
    private var hasMember: UInt64 = 0
    private var depth = 0

    init(headroom: Int = 0, capacity: Int = 256) {
        self.headroom = headroom
        bytes = []
        bytes.reserveCapacity(headroom + capacity)
        bytes.append(contentsOf: repeatElement(0, count: headroom))
    }

    /// Writes into `storage`'s memory: its contents are dropped and its capacity kept, so a
    /// buffer that is used again and again allocates nothing once it is big enough. Pass the
    /// only reference (move it in), or the first write copies it.
    init(reusing storage: [UInt8], headroom: Int) {
        self.headroom = headroom
        bytes = storage
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: headroom))
    }

    /// Hands over the bytes, headroom included, leaving the writer empty (so the caller holds
    /// the only reference and can write through it without a copy).
    mutating func takeBytes() -> [UInt8] {
        let taken = bytes
        bytes = []
        return taken
    }

    /// The JSON text alone (tests, logs).
    var json: [UInt8] { Array(bytes[headroom...]) }

    // MARK: Containers

    mutating func beginObject() { beginValue(); bytes.append(UInt8(ascii: "{")); push() }
    mutating func endObject() { pop(); bytes.append(UInt8(ascii: "}")) }
    mutating func beginArray() { beginValue(); bytes.append(UInt8(ascii: "[")); push() }
    mutating func endArray() { pop(); bytes.append(UInt8(ascii: "]")) }

    /// A member name inside an object; the value written next belongs to it.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }  // our own names need no escaping
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        valueFollowsKey = true
    }

    // MARK: Values

    mutating func string(_ value: String) {
        beginValue()
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string of our own that needs no escaping (a `type` name, a haptic moment).
    mutating func literal(_ value: StaticString) {
        beginValue()
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func int(_ value: Int) {
        beginValue()
        guard value != 0 else { bytes.append(UInt8(ascii: "0")); return }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits are produced backwards into a fixed buffer: no String on the hot path.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: more than UInt64's 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            while magnitude > 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            bytes.append(contentsOf: buffer[index...])
        }
    }

    mutating func bool(_ value: Bool) {
        beginValue()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    mutating func null() {
        beginValue()
        bytes.append(contentsOf: Self.nullBytes)
    }

    /// A value that is already JSON (a stored settings document); the caller vouches for it.
    mutating func raw(_ json: some Collection<UInt8>) {
        beginValue()
        bytes.append(contentsOf: json)
    }

    // MARK: Bookkeeping

    private var valueFollowsKey = false

    private mutating func beginValue() {
        if valueFollowsKey {
            valueFollowsKey = false
        } else {
            separate()
        }
    }

    /// A comma before every member or element but the first of its container.
    private mutating func separate() {
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth - 1)
        if hasMember & bit != 0 { bytes.append(UInt8(ascii: ",")) } else { hasMember |= bit }
    }

    private mutating func push() {
        precondition(depth < 64, "JSON nested too deep")
        depth += 1
        hasMember &= ~(1 << UInt64(depth - 1))
    }

    private mutating func pop() {
        precondition(depth > 0, "endObject/endArray without a begin")
        depth -= 1
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let nullBytes = Array("null".utf8)
}
