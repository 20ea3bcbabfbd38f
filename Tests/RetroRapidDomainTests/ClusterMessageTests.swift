import RetroRapidDomain
import Testing

@Suite("Cluster messages as sent between nodes")
struct ClusterMessageTests {
    static let messages: [ClusterMessage] = [
        .settingsChanged(playerID: 7, deviceID: 9, version: 3),
        .deviceRevoked(playerID: 7, deviceID: 9),
        .releaseGame(gameID: "g-1", playerID: 7, owner: "node-b"),
        .gameReleased(gameID: "g-1", playerID: 7),
        .gameStays(gameID: "g-1", playerID: 7),
    ]

    @Test func everyMessageComesBackAsItWasSentWithItsSender() {
        for message in Self.messages {
            let envelope = ClusterEnvelope(sender: "node-a.1", message: message)
            #expect(ClusterEnvelope(encoded: envelope.encoded) == envelope)
            #expect(envelope.encoded.hasPrefix("node-a.1|\(message.kind)|"))
        }
        #expect(Set(Self.messages.map(\.kind)) == Set(ClusterMessage.kinds))
    }

    @Test func aPayloadWithoutASenderOrAKnownMessageIsIgnored() {
        for payload in ["", "|settings|1|2|3", "settings|1|2|3", "a|", "a|settings|1|2", "a|settings|x|2|3",
                        "a|revoked|1|2|3", "a|release||1|b", "a|stays||7", "a|stays|g-1", "a|future|1", "a|settings|1|2|3|4"] {
            #expect(ClusterEnvelope(encoded: payload) == nil, "\(payload)")
        }
    }
}
