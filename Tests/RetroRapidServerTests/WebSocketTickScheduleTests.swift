import Testing
import RetroRapidLWS
@testable import RetroRapidServer

/// The bucketed schedule behind the one tick timer, and the per-connection rate limit.
@Suite("WebSocket tick schedule")
struct WebSocketTickScheduleTests {
    @Test func nothingIsTakenBeforeItsDeadline() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        schedule.schedule(1, at: 10_400)
        #expect(schedule.nextDue == 11_000)  // the bucket's end, never before the deadline
        #expect(schedule.takeDue(now: 10_999).isEmpty)
        #expect(schedule.takeDue(now: 11_000) == [1])
        #expect(schedule.nextDue == nil)
    }

    @Test func deadlinesInOneBucketComeTogetherAndBucketsInOrder() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        schedule.schedule(3, at: 5_000)
        schedule.schedule(1, at: 2_100)
        schedule.schedule(2, at: 2_900)
        schedule.schedule(4, at: 9_000)
        #expect(schedule.takeDue(now: 5_000) == [1, 2, 3])
        #expect(schedule.count == 1)
        #expect(schedule.nextDue == 9_000)
    }

    @Test func reschedulingReplacesTheEarlierDeadline() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        schedule.schedule(1, at: 1_000)
        schedule.schedule(1, at: 3_000)
        #expect(schedule.takeDue(now: 2_000).isEmpty)  // the old entry is skipped
        #expect(schedule.takeDue(now: 3_000) == [1])
        schedule.schedule(2, at: 4_000)
        schedule.schedule(2, at: 4_000)  // the same bucket again: still one entry
        #expect(schedule.takeDue(now: 4_000) == [2])
    }

    @Test func aCancelledIdIsNotTaken() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        schedule.schedule(1, at: 1_000)
        schedule.schedule(2, at: 1_000)
        schedule.cancel(1)
        #expect(schedule.takeDue(now: 1_000) == [2])
    }

    @Test func thousandsOfGamesAreTakenOnceEachInDeadlineOrder() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        var generator = SystemRandomNumberGenerator()
        var deadlines: [Int: Int64] = [:]
        for id in 1...5000 {
            let deadline = Int64.random(in: 0..<600_000, using: &generator)
            deadlines[id] = deadline
            schedule.schedule(id, at: deadline)
        }
        var taken: [Int] = []
        var now: Int64 = 0
        while let next = schedule.nextDue {
            now = next
            let batch = schedule.takeDue(now: now)
            #expect(batch.allSatisfy { deadlines[$0]! <= now && deadlines[$0]! > now - 1000 })
            taken += batch
        }
        #expect(taken.count == 5000 && Set(taken).count == 5000)
    }

    @Test func theTokenBucketAllowsABurstThenTheRate() {
        var bucket = TokenBucket(capacity: 3, ratePerSecond: 2, now: 0)
        func takes(_ count: Int, at now: Int64) -> Int {
            (0..<count).filter { _ in bucket.take(now: now) }.count
        }
        #expect(takes(4, at: 0) == 3)
        #expect(takes(1, at: 499_999) == 0)
        #expect(takes(2, at: 500_000) == 1)  // half a second at 2/s: one token
        #expect(takes(5, at: 10_000_000) == 3)  // never more than the capacity
    }
}
