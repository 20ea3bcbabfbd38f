/// Reads one client message's JSON into a `RawClientMessage`: `JSONObjectReader` checks the
/// text and hands over each member; the message's own field table
/// (ProtocolMessagesClient.swift) reads the ones it knows. Unknown fields are checked and
/// skipped, whatever they hold, so newer clients still work. A known field of the wrong kind
/// is not an error here: it is noted in `wrongFields`, and only a message type that uses the
/// field refuses it.
///
/// One difference from `JSONDecoder`: a repeated field keeps its last value, where
/// JSONDecoder on Linux keeps the first (RFC 8259 leaves it open). Pure.
///
/// `package`, not internal: the fuzz target in Sources/RetroRapidFuzz feeds it raw bytes.
package enum ClientMessageReader {
    package typealias Failure = JSONObjectReader.Failure

    package static func read(_ bytes: [UInt8]) throws(Failure) -> RawClientMessage {
        try JSONObjectReader.read(bytes, as: RawClientMessage.self)
    }
}
