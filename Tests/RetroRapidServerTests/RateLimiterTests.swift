import Testing
import RetroRapidSupport
@testable import RetroRapidServer

/// The limiter under an injected clock: every `now` below is made up, nothing sleeps.
@Suite("RateLimiter")
struct RateLimiterTests {
    let start = ContinuousClock.now

    @Test func theCountIsAllowedAtOnceThenRefusedUntilTheOldestLeavesTheWindow() {
        let limiter = RateLimiter(RateLimit(3, per: .seconds(30)))
        for _ in 0..<3 { #expect(limiter.take("10.0.0.1", now: start) == nil) }
        #expect(limiter.take("10.0.0.1", now: start) == 30)
        #expect(limiter.take("10.0.0.1", now: start + .seconds(4)) == 26)
        #expect(limiter.take("10.0.0.1", now: start + .milliseconds(29_500)) == 1)  // rounded up, never 0
        // At exactly a window later the first three have left it: three more at once.
        for _ in 0..<3 { #expect(limiter.take("10.0.0.1", now: start + .seconds(30)) == nil) }
        #expect(limiter.take("10.0.0.1", now: start + .seconds(30)) != nil)
        // Other keys have their own.
        #expect(limiter.take("10.0.0.2", now: start) == nil)
    }

    /// The docs say "10 per 10 minutes": over every 10-minute window, never 11 (a bucket of 10
    /// refilling 10 per 10 minutes admitted 19: 10 at once, then one a minute).
    @Test func neverMoreThanTheCountInAnyWindowWhateverTheSpacing() {
        let limiter = RateLimiter(RateLimit(10, per: .seconds(600)))
        var admitted: [Duration] = []
        var random = SystemRandomNumberGenerator()
        var offset = Duration.zero
        while offset < .seconds(4 * 3600) {
            if limiter.take("a", now: start + offset) == nil { admitted.append(offset) }
            offset += .milliseconds(Int.random(in: 1...40_000, using: &random))
        }
        for (index, first) in admitted.enumerated() {
            let inWindow = admitted[index...].prefix { $0 - first < .seconds(600) }.count
            #expect(inWindow <= 10, "\(inWindow) admitted in the 10 minutes from \(first)")
        }
        // And it is not stingy: at least 10 in each 10 minutes of steady asking (the gaps are at most 40 s).
        #expect(admitted.count >= 4 * 6 * 10 - 10)
    }

    @Test func theBucketTheDocsUsedToDescribeWouldHaveAdmittedNineteen() {
        // Ten at once, then one a minute for ten minutes: the old bucket let all 19 through.
        let limiter = RateLimiter(RateLimit(10, per: .seconds(600)))
        var admitted = 0
        for _ in 0..<10 where limiter.take("a", now: start) == nil { admitted += 1 }
        for minute in 1...9 where limiter.take("a", now: start + .seconds(60 * minute)) == nil { admitted += 1 }
        #expect(admitted == 10)
    }

    @Test func askingCountsNothingAndOnlyRecordedFailuresRefuse() {
        let limiter = RateLimiter(RateLimit(2, per: .seconds(60)))
        for _ in 0..<50 { #expect(limiter.retryAfter("p", now: start) == nil) }
        limiter.record("p", now: start)
        #expect(limiter.retryAfter("p", now: start + .seconds(10)) == nil)
        limiter.record("p", now: start + .seconds(10))
        #expect(limiter.retryAfter("p", now: start + .seconds(10)) == 50)
        #expect(limiter.retryAfter("p", now: start + .seconds(59)) == 1)
        // The first failure left the window: one fits again, and the second leaves at 70 s.
        #expect(limiter.retryAfter("p", now: start + .seconds(60)) == nil)
        #expect(limiter.count("p", now: start + .seconds(60)) == 1)
        #expect(limiter.count("p", now: start + .seconds(70)) == 0)
    }

    @Test func aKeyKeepsAtMostTheCountOfTimes() {
        let limiter = RateLimiter(RateLimit(3, per: .seconds(60)))
        for second in 0..<1000 { limiter.record("p", now: start + .milliseconds(second)) }
        #expect(limiter.count("p", now: start + .seconds(1)) == 3)
        // The newest three are what is kept: the wait runs from the third newest (at 0.997 s).
        #expect(limiter.retryAfter("p", now: start + .seconds(1)) == 60)
        #expect(limiter.retryAfter("p", now: start + .milliseconds(60_997)) == nil)
    }

    @Test func theTableStaysBounded() {
        let limiter = RateLimiter(RateLimit(1, per: .seconds(1)), maximumKeys: 100)
        for index in 0..<100 { _ = limiter.take("a\(index)", now: start) }
        #expect(limiter.keyCount == 100)
        // Past the bound, keys with nothing left in their window (they say nothing) are
        // forgotten; the new one is kept.
        _ = limiter.take("fresh", now: start + .seconds(5))
        #expect(limiter.keyCount == 1)
        #expect(limiter.take("fresh", now: start + .seconds(5)) == 1)
    }

    @Test func whenEveryKeyIsActiveTheLeastRecentlyActiveAreForgotten() {
        let limiter = RateLimiter(RateLimit(1, per: .seconds(3600)), maximumKeys: 100)
        for index in 0..<100 { _ = limiter.take("a\(index)", now: start + .seconds(index)) }
        _ = limiter.take("fresh", now: start + .seconds(200))
        // Pruned to three quarters, newest first, then the new key.
        #expect(limiter.keyCount == 76)
        #expect(limiter.take("a0", now: start + .seconds(201)) == nil)  // forgotten: allowed again
        #expect(limiter.take("a99", now: start + .seconds(201)) != nil)  // remembered
        #expect(limiter.take("fresh", now: start + .seconds(201)) != nil)
    }
}
