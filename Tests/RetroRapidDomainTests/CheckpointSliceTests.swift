import RetroRapidDomain
import RetroRapidRules
import Testing

/// A slice's text as written and read back, and what reading refuses: the text comes from
/// the database, so every length and number in it is checked before use.
@Suite struct CheckpointSliceTests {
    func text(_ batch: [GameCheckpoint]) -> String {
        var bytes: [UInt8] = []
        CheckpointSlice.encode(batch, appendingTo: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aSliceReadsBackAsWritten() throws {
        let batch = [
            GameCheckpoint(publicID: "00000000000000a1", steps: 912, movesBefore: 0,
                           moves: [.init(afterStep: 3, direction: .left), .init(afterStep: 10, direction: .right)],
                           durationMilliseconds: 123_456),
            // An id holding the separators is carried whole by its length.
            GameCheckpoint(publicID: "odd id:\n 7", steps: 0, movesBefore: 41, moves: [], durationMilliseconds: 0),
        ]
        let written = text(batch)
        #expect(written == "16:00000000000000a1 912 0 123456 3L,10R\n10:odd id:\n 7 0 41 0 \n")
        #expect(try CheckpointSlice.decode(written) == [
            .init(publicID: "00000000000000a1", steps: 912, movesBefore: 0, moves: "3L,10R", durationMilliseconds: 123_456),
            .init(publicID: "odd id:\n 7", steps: 0, movesBefore: 41, moves: "", durationMilliseconds: 0),
        ])
        #expect(try CheckpointSlice.decode("").isEmpty)
    }

    @Test(arguments: [
        "16:00000000000000a1 1 0 1 ",            // no end of line
        "17:00000000000000a1 1 0 1 \n",          // the id's length runs into the next field
        "9999:a 1 0 1 \n",                       // a length past the text
        "0: 1 0 1 \n",                           // an empty id
        "1:a 1 0 \n",                            // a number missing
        "1:a -1 0 1 \n",                         // a sign
        "1:a 1 0 9999999999999999999999 \n",     // a number past Int
        "1:a  1 0 1 \n",                         // an empty number
        "x:a 1 0 1 \n",                          // a length that is no number
        "1:a1 0 1 \n",                           // no space after the id
    ]) func aTextThatBreaksTheFormatIsRefusedWhole(_ text: String) {
        #expect(throws: StoreError.self) { try CheckpointSlice.decode(text) }
    }
}
