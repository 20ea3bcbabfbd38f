import Testing
@testable import RetroRapidServer

@Suite("RateLimiter")
struct RateLimiterTests {
    @Test func aBurstIsAllowedThenRefusedUntilATokenRefills() {
        let limiter = RateLimiter(RateLimit(burst: 3, per: .seconds(30)))  // a token every 10 s
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(limiter.take("10.0.0.1", now: start) == nil) }
        #expect(limiter.take("10.0.0.1", now: start) == 10)
        #expect(limiter.take("10.0.0.1", now: start + .seconds(4)) == 6)
        #expect(limiter.take("10.0.0.1", now: start + .seconds(10)) == nil)
        // Other addresses have their own bucket.
        #expect(limiter.take("10.0.0.2", now: start) == nil)
    }

    @Test func theTableStaysBounded() {
        let limiter = RateLimiter(RateLimit(burst: 1, per: .seconds(1)), maximumKeys: 100)
        let start = ContinuousClock.now
        for index in 0..<100 { _ = limiter.take("a\(index)", now: start) }
        #expect(limiter.keyCount == 100)
        // Past the bound, the buckets that have refilled (and so say nothing) are forgotten;
        // the one still empty is kept.
        _ = limiter.take("fresh", now: start + .seconds(5))
        #expect(limiter.keyCount == 1)
        #expect(limiter.take("fresh", now: start + .seconds(5)) == 1)
    }
}
