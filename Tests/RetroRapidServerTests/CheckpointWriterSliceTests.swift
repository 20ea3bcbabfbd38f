import Testing
import RetroRapidDomain
@testable import RetroRapidServer

/// `CheckpointWriter.slice(of:in:)` spreads matches evenly over a round's slices however their
/// ids come (one after another, or every second or third id when sessions or race seats
/// take the ids between), so no slice carries much more than its share of the round; and
/// `slices(for:)` gives a small server one slice and a big one up to ten.
@Suite("Checkpoint slices")
struct CheckpointWriterSliceTests {
    func counts(_ ids: some Sequence<Int>) -> [Int] {
        var counts = Array(repeating: 0, count: CheckpointWriter.slicesPerRound)
        for id in ids { counts[CheckpointWriter.slice(of: id, in: CheckpointWriter.slicesPerRound)] += 1 }
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

    @Test(arguments: [1, 3, 7, 10])
    func everyIDHasASliceOfTheRound(slices: Int) {
        for id in [0, 1, 12_345, Int.max] {
            #expect((0..<slices).contains(CheckpointWriter.slice(of: id, in: slices)))
        }
        #expect(CheckpointWriter.slice(of: 12_345, in: 1) == 0)
    }

    @Test func aRoundTakesASliceForAboutEveryGamesPerSliceUpToTen() {
        #expect(CheckpointWriter.slices(for: 0, gamesPerSlice: 1_000) == 1)
        #expect(CheckpointWriter.slices(for: 30, gamesPerSlice: 1_000) == 1)
        #expect(CheckpointWriter.slices(for: 1_000, gamesPerSlice: 1_000) == 1)
        #expect(CheckpointWriter.slices(for: 1_001, gamesPerSlice: 1_000) == 2)
        #expect(CheckpointWriter.slices(for: 5_000, gamesPerSlice: 1_000) == 5)
        #expect(CheckpointWriter.slices(for: 12_500, gamesPerSlice: 1_000) == 10)
        #expect(CheckpointWriter.slices(for: 19_900, gamesPerSlice: 1_000) == 10)
        #expect(CheckpointWriter.slices(for: 12, gamesPerSlice: 2) == 6)
        #expect(CheckpointWriter.slices(for: 12, gamesPerSlice: 1) == 10)
    }
}

/// Where the writer's compactions start: where the one before left no row below, but every
/// `compactionsPerFullSweep`-th at the table's lowest row (nil `next`) whatever it left.
@Suite("Checkpoint compactions")
struct CheckpointWriterCompactionTests {
    let finished: CheckpointCompaction = {
        var compaction = CheckpointCompaction(first: 100, covered: ["a"], rowsPerPart: 10)
        compaction.isFinished = true
        return compaction
    }()

    @Test func aCompactionStartsWhereTheOneBeforeLeftNoRowBelow() {
        let next = CheckpointWriter.compaction(number: 3, after: finished, first: 200, covered: ["a"], rowsPerPart: 5)
        #expect(next == CheckpointCompaction(first: 200, covered: ["a"], rowsPerPart: 5, next: 100))
    }

    @Test func theFirstAndEveryTenthStartAtTheLowestRow() {
        #expect(CheckpointWriter.compaction(number: 1, after: nil, first: 200, covered: ["a"], rowsPerPart: 5).next == nil)
        for number in [CheckpointWriter.compactionsPerFullSweep, 2 * CheckpointWriter.compactionsPerFullSweep] {
            let sweep = CheckpointWriter.compaction(number: number, after: finished, first: 200, covered: ["a"], rowsPerPart: 5)
            #expect(sweep == CheckpointCompaction(first: 200, covered: ["a"], rowsPerPart: 5))
        }
        #expect(CheckpointWriter.compaction(number: CheckpointWriter.compactionsPerFullSweep + 1, after: finished, first: 200,
                                            covered: ["a"], rowsPerPart: 5).next == 100)
    }
}
