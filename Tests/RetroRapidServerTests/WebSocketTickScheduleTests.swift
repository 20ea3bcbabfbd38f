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

    @Test func idsFarApartAndNegativeOnesAreKeptApart() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        let ids = [-4, -1, 1, 2, 1 << 20, 1 << 40, Int.max, Int.min]
        for (index, id) in ids.enumerated() { schedule.schedule(id, at: Int64(1_000 * (index + 1))) }
        #expect(schedule.count == ids.count)
        schedule.cancel(1 << 20)
        #expect(schedule.takeDue(now: 100_000) == ids.filter { $0 != 1 << 20 })
        #expect(schedule.count == 0 && schedule.nextDue == nil)
    }

    @Test func deadlinesBeyondTheWheelComeInOrderWhenItReachesThem() {
        // 64 buckets of 1 ms: the wheel reaches 64 ms ahead, the rest waits in order.
        var schedule = TickSchedule(granularityMicroseconds: 1000, wheelSlots: 64)
        schedule.schedule(1, at: 1_000)
        schedule.schedule(2, at: 500_000)
        schedule.schedule(3, at: 65_000)
        schedule.schedule(4, at: 10_000_000_000)  // hours ahead
        schedule.schedule(5, at: 500_000)
        #expect(schedule.takeDue(now: 1_000) == [1])
        #expect(schedule.nextDue == 65_000)
        schedule.schedule(6, at: 64_500)  // the wheel's last bucket now: after 3, which waited for it
        #expect(schedule.takeDue(now: 499_999) == [3, 6])
        #expect(schedule.nextDue == 500_000)
        #expect(schedule.takeDue(now: 500_000) == [2, 5])
        #expect(schedule.nextDue == 10_000_000_000)
        #expect(schedule.takeDue(now: 9_999_999_999).isEmpty)
        #expect(schedule.takeDue(now: 10_000_000_000) == [4])
        #expect(schedule.count == 0)
    }

    @Test func aDeadlineAlreadyPassedIsDueAtOnceAndFirst() {
        var schedule = TickSchedule(granularityMicroseconds: 1000, wheelSlots: 64)
        schedule.schedule(1, at: 10_000)
        schedule.schedule(2, at: 12_000)
        #expect(schedule.takeDue(now: 10_500) == [1])
        // Behind the wheel now (a game late for its deadlines): still taken, earliest first.
        schedule.schedule(3, at: 9_000)
        schedule.schedule(4, at: 2_000)
        #expect(schedule.nextDue == 2_000)
        #expect(schedule.takeDue(now: 8_000) == [4])  // not yet 9 ms: an earlier now takes less
        #expect(schedule.takeDue(now: 12_000) == [3, 2])
    }

    @Test func cancelThenScheduleAgainKeepsOnlyTheNewDeadline() {
        var schedule = TickSchedule(granularityMicroseconds: 1000, wheelSlots: 64)
        for (deadline, later) in [(Int64(2_000), Int64(3_000)), (900_000, 950_000), (5_000, 800_000)] {
            schedule.schedule(7, at: deadline)
            schedule.cancel(7)
            schedule.cancel(7)  // cancelling twice is nothing
            #expect(schedule.count == 0 && schedule.nextDue == nil)
            schedule.schedule(7, at: later)
            #expect(schedule.takeDue(now: deadline).isEmpty)
            #expect(schedule.takeDue(now: later) == [7])
        }
    }

    /// Against the plain rule it implements: each id's latest deadline, taken once its bucket has
    /// ended, buckets earliest first and within one the order scheduled; with a small wheel so
    /// that deadlines beyond it, behind it and going back and forth between the two all come up.
    @Test func randomOperationsMatchTheRule() {
        var generator = TickTestRandom(seed: 17)
        for round in 0..<20 {
            var schedule = TickSchedule(granularityMicroseconds: 100, wheelSlots: 64)
            var model: [Int: (key: Int64, order: Int)] = [:]
            var order = 0
            var now = Int64(round) * 1_000_000 - 10_000_000  // negative times too
            for _ in 0..<3_000 {
                let id = Int(generator.next() % 300) - 5
                switch generator.next() % 10 {
                case 0..<5:
                    // Mostly within the wheel's 6.4 ms, some far beyond, some already passed.
                    let spread: Int64 = generator.next() % 4 == 0 ? 200_000 : 6_000
                    let deadline = now - 1_000 + Int64(generator.next() % UInt64(spread))
                    schedule.schedule(id, at: deadline)
                    let key = deadline >= 0 ? (deadline + 99) / 100 : deadline / 100
                    if model[id]?.key != key { order += 1; model[id] = (key, order) }
                case 5:
                    schedule.cancel(id)
                    model[id] = nil
                default:
                    now += Int64(generator.next() % 3_000) - 300  // now and then a step back
                    let expected = model.filter { $0.value.key * 100 <= now }
                        .sorted { ($0.value.key, $0.value.order) < ($1.value.key, $1.value.order) }.map(\.key)
                    for id in expected { model[id] = nil }
                    #expect(schedule.takeDue(now: now) == expected)
                }
                #expect(schedule.count == model.count)
                #expect(schedule.nextDue == model.values.map(\.key).min().map { $0 * 100 })
            }
        }
    }

    @Test func takingIntoAnArrayAppendsToIt() {
        var schedule = TickSchedule(granularityMicroseconds: 1000)
        schedule.schedule(1, at: 1_000)
        var due = [9]
        schedule.takeDue(now: 1_000, into: &due)
        #expect(due == [9, 1])
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

/// A small seeded generator, so a failing sequence can be run again.
private struct TickTestRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
