import Foundation
import RetroRapidDomain
import Testing

/// The one rule both backends apply to the stored events of a key, and the checks on the
/// numbers read back before any arithmetic.
@Suite struct RateLimitWindowTests {
    let key = RateLimitKey(action: "code_redeem", scope: "player", key: "7", count: 5, window: .seconds(600))
    let now: Int64 = 1_800_000_000_000

    @Test func aKeyWithFewerEventsThanItsCountHasRoom() throws {
        #expect(try RateLimitWindow.refusal(key, countThNewest: nil, now: now) == nil)
    }

    @Test func aFullKeyWaitsUntilItsCountThNewestLeavesRoundedUpToSeconds() throws {
        #expect(try RateLimitWindow.refusal(key, countThNewest: now, now: now)?.retryAfter == 600)
        #expect(try RateLimitWindow.refusal(key, countThNewest: now - 599_001, now: now)?.retryAfter == 1)
        #expect(try RateLimitWindow.refusal(key, countThNewest: now - 1, now: now)?.retryAfter == 600)
        #expect(RateLimitWindow.start(key, now: now) == now - 600_000)
    }

    @Test func aTimeFromAClockAheadWaitsNoLongerThanAWindow() throws {
        #expect(try RateLimitWindow.refusal(key, countThNewest: now + 3_600_000, now: now)?.retryAfter == 600)
    }

    @Test func aDamagedStoredTimeIsUnreadableNotATrap() {
        for stored in [Int64.max, Int64.min, -1, RateLimitWindow.latestMilliseconds + 1] {
            let error = #expect(throws: StoreError.self) { try RateLimitWindow.refusal(key, countThNewest: stored, now: now) }
            #expect(error?.code == .unreadable)
        }
    }

    @Test func aDateNoClockGivesIsRefusedNotConverted() throws {
        for date in [Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: .infinity), Date(timeIntervalSince1970: .nan),
                     Date(timeIntervalSince1970: 1e300), Date.distantFuture.addingTimeInterval(1e12)] {
            #expect(throws: StoreError.self) { try RateLimitWindow.milliseconds(date) }
        }
        #expect(try RateLimitWindow.milliseconds(Date(timeIntervalSince1970: 1.9999)) == 1999)
    }

    @Test func theWindowCountsInWholeMilliseconds() {
        #expect(key.windowMilliseconds == 600_000)
        #expect(RateLimitKey(action: "a", scope: "b", key: "c", count: 1, window: .nanoseconds(1)).windowMilliseconds == 1)
    }
}
