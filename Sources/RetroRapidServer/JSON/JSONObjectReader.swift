/// Reads one JSON object (RFC 8259) member by member, checking that the whole text is valid
/// JSON on the way. It knows no field: the type it fills (`JSONObjectFields`) is handed each
/// member's name and reads the value it wants with `string()`, `bool()` or `integer()`; any
/// member it does not want it passes to `skipValue()`, which checks and skips whatever it holds.
///
/// Why not `JSONDecoder`: every move a player makes is one message, and decoding it through
/// `Data`, the decoder's value tree and `Decodable` cost ~8 µs: the biggest share of the
/// server's own CPU at 12,500 games (docs/BENCHMARKS.md). Client messages are one flat object
/// whose few fields are strings, a bool and an integer, so a strict reader that compares member
/// names in place and allocates only the strings kept does the same job in well under a
/// microsecond.
///
/// What it accepts matches `JSONDecoder`: `null` is its own answer (`.null`, an absent field to
/// the caller), a number read as an integer must be integral (1.0 and 1e2 are, 1.5 is not) and
/// fit in an `Int`, nesting stops at 512 levels. Pure.
///
/// `package`, not internal: the fuzz target in Sources/RetroRapidFuzz reaches it through
/// `ClientMessageReader`.
package struct JSONObjectReader {
    package enum Failure: Error, Equatable {
        /// Not valid JSON, or not one value.
        case notJSON
        /// Valid JSON, but not an object.
        case notAnObject
    }

    /// A member's value as read for a field of one kind.
    package enum Value<Wanted> {
        case value(Wanted)
        case null
        /// JSON of another kind (checked and skipped).
        case otherKind
    }

    /// Reads `bytes` as one object into a fresh `Fields`, member by member, in order.
    package static func read<Fields: JSONObjectFields>(_ bytes: [UInt8], as _: Fields.Type) throws(Failure) -> Fields {
        try bytes.withUnsafeBufferPointer { (buffer) throws(Failure) -> Fields in
            var reader = JSONObjectReader(buffer)
            return try reader.readObject(Fields.self)
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    /// JSONDecoder's limit too: deeper input is refused rather than recursed into.
    private static let maximumDepth = 512

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: The object

    private mutating func readObject<Fields: JSONObjectFields>(_: Fields.Type) throws(Failure) -> Fields {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            try skipValue()
            try expectEnd()
            throw .notAnObject  // valid JSON of another kind
        }
        var fields = Fields()
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                let name = try memberName()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                let before = index
                try fields.readMember(name, from: &self)
                // A `JSONObjectFields` that read nothing would leave the text unchecked.
                if index == before { try skipValue() }
                skipWhitespace()
                guard let next = take() else { throw .notJSON }
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { throw .notJSON }
            }
        }
        try expectEnd()
        return fields
    }

    /// A member's name, kept as the bytes it was written with when it has no escapes and is
    /// ASCII (every name a field has), so that matching it allocates nothing.
    package struct MemberName {
        fileprivate let raw: UnsafeBufferPointer<UInt8>
        fileprivate let decoded: String?

        /// Whether the name is `name` (compared as JSON text after unescaping).
        package func `is`(_ name: StaticString) -> Bool {
            if let decoded { return decoded.utf8.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)) }
            return raw.count == name.utf8CodeUnitCount && memcmpEqual(raw, name)
        }

        private func memcmpEqual(_ raw: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
            let other = name.utf8Start
            for offset in 0..<raw.count where raw[offset] != other[offset] { return false }
            return true
        }
    }

    private mutating func memberName() throws(Failure) -> MemberName {
        let span = try scanString()
        let raw = UnsafeBufferPointer(rebasing: bytes[span.start..<span.end])
        guard span.hasEscapes || span.hasNonASCII else { return MemberName(raw: raw, decoded: nil) }
        return MemberName(raw: raw, decoded: try decode(span))
    }

    // MARK: Values a field reads

    /// A string member's value.
    package mutating func string() throws(Failure) -> Value<String> {
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): return .value(try decode(try scanString()))
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: try skipValue(); return .otherKind
        }
    }

    /// A `true` or `false` member's value.
    package mutating func bool() throws(Failure) -> Value<Bool> {
        switch peek() ?? 0 {
        case UInt8(ascii: "t"): try literal("true"); return .value(true)
        case UInt8(ascii: "f"): try literal("false"); return .value(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: try skipValue(); return .otherKind
        }
    }

    /// A whole-number member's value: a number that is not integral or does not fit in an
    /// `Int` is of another kind.
    package mutating func integer() throws(Failure) -> Value<Int> {
        switch peek() ?? 0 {
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try integerNumber().map { .value($0) } ?? .otherKind
        default: try skipValue(); return .otherKind
        }
    }

    // MARK: Values

    /// Checks and passes over any one value (a member no field wants).
    package mutating func skipValue() throws(Failure) {
        switch peek() ?? 0 {
        case UInt8(ascii: "{"): try skipContainer(closedBy: UInt8(ascii: "}"), membersHaveNames: true)
        case UInt8(ascii: "["): try skipContainer(closedBy: UInt8(ascii: "]"), membersHaveNames: false)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw .notJSON
        }
    }

    /// Checks and passes over an object (members `"name": value`) or an array (values); the
    /// cursor is at its opening bracket.
    private mutating func skipContainer(closedBy closing: UInt8, membersHaveNames: Bool) throws(Failure) {
        try nest()
        index += 1
        skipWhitespace()
        if peek() == closing { index += 1; depth -= 1; return }
        while true {
            skipWhitespace()
            if membersHaveNames {
                try skipString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
            }
            try skipValue()
            skipWhitespace()
            guard let next = take() else { throw .notJSON }
            if next == closing { break }
            guard next == UInt8(ascii: ",") else { throw .notJSON }
        }
        depth -= 1
    }

    private mutating func nest() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw .notJSON }
    }

    // MARK: Strings

    /// Where a string's content is, and what reading it needs.
    private struct StringSpan {
        var start: Int
        var end: Int
        var hasEscapes: Bool
        var hasNonASCII: Bool
    }

    /// Passes over a string, checking its escapes (the cursor is at the opening quote).
    private mutating func scanString() throws(Failure) -> StringSpan {
        guard take() == UInt8(ascii: "\"") else { throw .notJSON }
        var span = StringSpan(start: index, end: index, hasEscapes: false, hasNonASCII: false)
        while let byte = take() {
            switch byte {
            case UInt8(ascii: "\""):
                span.end = index - 1
                return span
            case UInt8(ascii: "\\"):
                span.hasEscapes = true
                guard let escaped = take() else { throw .notJSON }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let digit = take(), Self.hexValue(digit) != nil else { throw .notJSON }
                    }
                default: throw .notJSON
                }
            case 0..<0x20: throw .notJSON  // control characters must be escaped
            case 0x80...: span.hasNonASCII = true
            default: break
            }
        }
        throw .notJSON  // unterminated
    }

    private mutating func skipString() throws(Failure) {
        let span = try scanString()
        // Skipped text must still be UTF-8 (and its escapes whole characters), as JSON requires.
        if span.hasNonASCII || span.hasEscapes { _ = try decode(span) }
    }

    private func decode(_ span: StringSpan) throws(Failure) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[span.start..<span.end])
        guard span.hasEscapes else {
            if !span.hasNonASCII { return String(decoding: raw, as: UTF8.self) }
            guard let text = String(validating: raw, as: UTF8.self) else { throw .notJSON }
            return text
        }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(raw.count)
        var position = 0
        while position < raw.count {
            let byte = raw[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else { unescaped.append(byte); continue }
            let escaped = raw[position]
            position += 1
            switch escaped {
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0C)
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = Self.hex4(raw, at: position)
                position += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard position + 6 <= raw.count, raw[position] == UInt8(ascii: "\\"),
                          raw[position + 1] == UInt8(ascii: "u") else { throw .notJSON }
                    let low = Self.hex4(raw, at: position + 2)
                    guard (0xDC00..<0xE000).contains(low) else { throw .notJSON }
                    position += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let character = Unicode.Scalar(scalar) else { throw .notJSON }  // a lone low surrogate
                unescaped.append(contentsOf: UTF8.encode(character)!)
            default: unescaped.append(escaped)  // " \ /
            }
        }
        guard let text = String(validating: unescaped, as: UTF8.self) else { throw .notJSON }
        return text
    }

    /// Four hex digits already checked by `scanString`.
    private static func hex4(_ raw: UnsafeBufferPointer<UInt8>, at position: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 { value = value << 4 | UInt32(hexValue(raw[position + offset])!) }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Numbers

    /// Passes over a number in JSON's grammar; true when it is written as an integer (no
    /// fraction, no exponent).
    private mutating func number() throws(Failure) -> (start: Int, isInteger: Bool) {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = take(), Self.isDigit(first) else { throw .notJSON }
        if first != UInt8(ascii: "0") { skipDigits() }  // no leading zeros
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard let digit = peek(), Self.isDigit(digit) else { throw .notJSON }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            isInteger = false
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), Self.isDigit(digit) else { throw .notJSON }
            skipDigits()
        }
        return (start, isInteger)
    }

    /// A number as an `Int`, or nil when it is not integral or does not fit.
    private mutating func integerNumber() throws(Failure) -> Int? {
        let (start, isInteger) = try number()
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if isInteger {
            var value = 0
            let negative = text[0] == UInt8(ascii: "-")
            for digit in text.dropFirst(negative ? 1 : 0) {
                let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
                let d = Int(digit - UInt8(ascii: "0"))
                let (next, overflowB) = negative ? shifted.subtractingReportingOverflow(d) : shifted.addingReportingOverflow(d)
                if overflowA || overflowB { return nil }
                value = next
            }
            return value
        }
        return Self.exactInteger(text)
    }

    /// A number written with a fraction or an exponent (`1.0`, `1e2`, `0.5e1`) as an `Int`, or
    /// nil when it is not integral or does not fit, decided on the decimal digits: through a
    /// `Double`, 922337203685477580.7 passed as 922337203685477632 (found by the
    /// client-message fuzz target, Sources/RetroRapidFuzz/ClientMessageFuzzTarget.swift).
    /// Rare in messages, so a small array is fine here.
    private static func exactInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        let negative = text[0] == UInt8(ascii: "-")
        var position = negative ? 1 : 0
        var digits: [Int] = []  // the integer part's digits, then the fraction's
        var fractionDigits = 0
        while position < text.count, isDigit(text[position]) {
            digits.append(Int(text[position] - UInt8(ascii: "0")))
            position += 1
        }
        if position < text.count, text[position] == UInt8(ascii: ".") {
            position += 1
            while position < text.count, isDigit(text[position]) {
                digits.append(Int(text[position] - UInt8(ascii: "0")))
                fractionDigits += 1
                position += 1
            }
        }
        var exponent = 0
        if position < text.count {  // e or E, then an optional sign and digits (checked by `number`)
            position += 1
            let negativeExponent = text[position] == UInt8(ascii: "-")
            if text[position] == UInt8(ascii: "-") || text[position] == UInt8(ascii: "+") { position += 1 }
            while position < text.count {
                // Capped far beyond the 19 digits an Int has, so that it cannot overflow.
                exponent = min(exponent * 10 + Int(text[position] - UInt8(ascii: "0")), 100_000_000)
                position += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        guard let first = digits.firstIndex(where: { $0 != 0 }), let last = digits.lastIndex(where: { $0 != 0 }) else {
            return 0  // only zeros: 0.0, -0e5
        }
        // The power of ten of the last non-zero digit: negative means a fraction remains.
        let scale = exponent - fractionDigits + (digits.count - 1 - last)
        guard scale >= 0, last - first + 1 + scale <= 19 else { return nil }
        var value = 0
        for digit in digits[first...last] + Array(repeating: 0, count: scale) {
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflowA || overflowB { return nil }
            value = next
        }
        return value
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while let byte = peek(), Self.isDigit(byte) { index += 1 }
    }

    // MARK: Bytes

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func take() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard take() == byte else { throw .notJSON }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .notJSON }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw .notJSON }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Only whitespace may follow the value.
    private mutating func expectEnd() throws(Failure) {
        skipWhitespace()
        guard index == bytes.count else { throw .notJSON }
    }
}

/// A type `JSONObjectReader` fills: it starts empty and is handed each member in turn, whose
/// value it reads (or skips) by the fields it declares.
package protocol JSONObjectFields {
    init()
    mutating func readMember(_ name: JSONObjectReader.MemberName, from reader: inout JSONObjectReader) throws(JSONObjectReader.Failure)
}
