import Foundation

/// A value whose JSON object both sides send, written once: the WebSocket side writes it with
/// `JSONWriter` (`JSONWriter.object`), the HTTP API through `Encodable` (`APIJSON`'s
/// JSONEncoder, keys sorted), so the two cannot drift apart.
protocol JSONObjectEncoding: Encodable {
    /// Writes the object's members, in the order the socket sends them.
    func writeMembers<Sink: JSONMemberSink>(into sink: inout Sink)
}

/// Where `JSONObjectEncoding` writes members: a name and a value each. Times are written as
/// ISO-8601 UTC to the second (`2026-01-16T00:00:00Z`) by both sinks.
protocol JSONMemberSink {
    mutating func member(_ name: StaticString, _ value: String)
    mutating func member(_ name: StaticString, _ value: Int)
    mutating func member(_ name: StaticString, _ value: Bool)
    mutating func member(_ name: StaticString, _ value: Date)
}

extension JSONObjectEncoding {
    func encode(to encoder: any Encoder) throws {
        var sink = EncoderMemberSink(container: encoder.container(keyedBy: EncoderMemberSink.Key.self))
        writeMembers(into: &sink)
        if let error = sink.error { throw error }
    }
}

extension JSONWriter: JSONMemberSink {
    mutating func member(_ name: StaticString, _ value: String) { key(name); string(value) }
    mutating func member(_ name: StaticString, _ value: Int) { key(name); int(value) }
    mutating func member(_ name: StaticString, _ value: Bool) { key(name); bool(value) }
    mutating func member(_ name: StaticString, _ value: Date) { key(name); string(ServerMessage.timestamp(value)) }

    /// A value's whole object.
    mutating func object(_ value: some JSONObjectEncoding) {
        beginObject()
        value.writeMembers(into: &self)
        endObject()
    }
}

/// The HTTP side's sink: members into an `Encoder`'s keyed container (a date stays a `Date`,
/// for the encoder's ISO-8601 strategy).
private struct EncoderMemberSink: JSONMemberSink {
    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: StaticString) { stringValue = "\(name)" }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    var container: KeyedEncodingContainer<Key>
    /// The first failure (none for strings, numbers, booleans and ISO-8601 dates).
    var error: (any Error)?

    mutating func member(_ name: StaticString, _ value: String) { encode(value, name) }
    mutating func member(_ name: StaticString, _ value: Int) { encode(value, name) }
    mutating func member(_ name: StaticString, _ value: Bool) { encode(value, name) }
    mutating func member(_ name: StaticString, _ value: Date) { encode(value, name) }

    private mutating func encode(_ value: some Encodable, _ name: StaticString) {
        guard error == nil else { return }
        do { try container.encode(value, forKey: Key(name)) } catch { self.error = error }
    }
}
