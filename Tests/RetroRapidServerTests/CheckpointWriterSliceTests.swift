import Testing
@testable import RetroRapidServer

/// `CheckpointWriter.slice(of:)` spreads matches evenly over a round's slices however their
/// ids come (one after another, or every second or third id when sessions or race seats
/// take the ids between), so no slice carries much more than its share of the round.
@Suite("Checkpoint slices")
struct CheckpointWriterSliceTests {
    func counts(_ ids: some Sequence<Int>) -> [Int] {
        var counts = Array(repeating: 0, count: CheckpointWriter.slicesPerRound)
        for id in ids { counts[CheckpointWriter.slice(of: id)] += 1 }
        return counts
    }

    @Test(arguments: [1, 2, 3, 4, 5, 10])
    func everySliceTakesAboutItsShare(stride step: Int) {
        let matches = 12_500
        let share = matches / CheckpointWriter.slicesPerRound
        let counts = counts(stride(from: 1, to: 1 + matches * step, by: step))
        #expect(counts.reduce(0, +) == matches)
        // Within 10 % of an even share: the largest slice decides how long one turn takes.
        #expect(counts.allSatisfy { abs($0 - share) <= share / 10 }, "slices: \(counts)")
    }

    @Test func aMatchStaysInOneSlice() {
        #expect(CheckpointWriter.slice(of: 12_345) == CheckpointWriter.slice(of: 12_345))
        #expect((0..<CheckpointWriter.slicesPerRound).contains(CheckpointWriter.slice(of: Int.max)))
        #expect((0..<CheckpointWriter.slicesPerRound).contains(CheckpointWriter.slice(of: 0)))
    }
}
