import RetroRapidDomain
import Testing

/// Where a compaction starts: where the one before left no row below, only when that is sure
/// to hold, else at the table's lowest row (nil `next`).
@Suite struct CheckpointCompactionTests {
    func finished(first: Int64, covered: Set<String> = ["a"], lowestKept: Int64? = nil) -> CheckpointCompaction {
        var compaction = CheckpointCompaction(first: first, covered: covered, rowsPerPart: 10)
        compaction.lowestKept = lowestKept
        compaction.isFinished = true
        return compaction
    }

    @Test func aFinishedCompactionHandsOnItsFirstOrItsLowestKeptRow() {
        #expect(finished(first: 100).leftNothingBelow == 100)
        #expect(finished(first: 100).following(first: 200, covered: ["a"], rowsPerPart: 5).next == 100)
        #expect(finished(first: 100, lowestKept: 40).following(first: 200, covered: ["a"], rowsPerPart: 5).next == 40)
        let next = finished(first: 100).following(first: 200, covered: ["b"], rowsPerPart: 5)
        #expect(next == CheckpointCompaction(first: 200, covered: ["b"], rowsPerPart: 5, next: 100))
    }

    @Test func anUnfinishedOneOrARoundThatCoveredNothingOrIdsThatWentBackStartAtTheLowestRow() {
        var unfinished = CheckpointCompaction(first: 100, covered: ["a"], rowsPerPart: 10)
        unfinished.next = 60
        #expect(unfinished.leftNothingBelow == nil)
        #expect(unfinished.following(first: 200, covered: ["a"], rowsPerPart: 5).next == nil)
        // No row of its round is left above `first`: SQLite may hand out lower ids again.
        #expect(finished(first: 100, covered: []).following(first: 200, covered: ["a"], rowsPerPart: 5).next == nil)
        // The ids went back (a table emptied and started again): the old point says nothing.
        #expect(finished(first: 100).following(first: 50, covered: ["a"], rowsPerPart: 5).next == nil)
    }
}
