import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `RateLimitRepository`, run against every backend in `StorageBackends.all`:
/// exact windows, several keys counted all or none, a guess uncounted, pruning, bad keys
/// refused, and takes at once from many connections stopping at the limit.
@Suite struct RateLimitRepositoryContractTests {
    let t0 = utc("2026-12-01T10:00:00Z")

    func key(_ key: String = "192.0.2.1", scope: String = "address", count: Int = 3, seconds: Int64 = 60) -> RateLimitKey {
        RateLimitKey(action: "code_redeem", scope: scope, key: key, count: count, window: .seconds(seconds))
    }

    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    @Test(arguments: StorageBackends.all) func aKeyTakesExactlyItsCountInAnyWindow(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let limits = store.repositories().rateLimits
            let address = key()
            for second in [0.0, 10, 20] { try limits.take([address], now: at(second)) }
            // Full: the oldest (at 0) leaves the window at 60.
            #expect(throws: RateLimitReached(key: address, retryAfter: 30)) { try limits.take([address], now: at(30)) }
            #expect(throws: RateLimitReached(key: address, retryAfter: 1)) { try limits.take([address], now: at(59.999)) }
            #expect(try limits.refusal([address], now: at(59.999)) == RateLimitReached(key: address, retryAfter: 1))
            // Not a bucket: at 60 exactly one place is free, not three.
            #expect(try limits.refusal([address], now: at(60)) == nil)
            try limits.take([address], now: at(60))
            #expect(throws: RateLimitReached(key: address, retryAfter: 5)) { try limits.take([address], now: at(65)) }
            // Another key, and the same key of another action, count apart.
            try limits.take([key("192.0.2.2")], now: at(65))
            try limits.take([RateLimitKey(action: "sign_in", scope: "address", key: "192.0.2.1", count: 1, window: .seconds(60))],
                            now: at(65))
        }
    }

    @Test(arguments: StorageBackends.all) func severalKeysAreCountedAllOrNone(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let limits = store.repositories().rateLimits
            let player = key("7", scope: "player", count: 2), address = key(count: 3)
            try limits.take([player, address], now: at(0))
            try limits.take([player, address], now: at(1))
            // The player is full: refused for the player (the first key given), the address untouched.
            let before = try store.dump()
            #expect(throws: RateLimitReached(key: player, retryAfter: 58)) { try limits.take([player, address], now: at(2)) }
            #expect(try store.dump() == before)
            try limits.take([key("8", scope: "player", count: 2), address], now: at(3))
            #expect(throws: RateLimitReached(key: address, retryAfter: 57)) {
                try limits.take([key("9", scope: "player", count: 2), address], now: at(3))
            }
            #expect(try limits.refusal([key("9", scope: "player", count: 2), address], now: at(3))?.key == address)
        }
    }

    @Test(arguments: StorageBackends.all) func aReleasedTakeCountsNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let limits = store.repositories().rateLimits
            let address = key(count: 2)
            for _ in 0..<10 {
                try limits.release(try limits.take([address, key("7", scope: "player", count: 2)], now: at(0)))
            }
            try limits.take([address], now: at(1))
            let kept = try limits.take([address], now: at(2))
            #expect(try limits.refusal([address], now: at(3)) == RateLimitReached(key: address, retryAfter: 58))
            try limits.release(kept)
            try limits.release(kept)  // gone already: no error
            #expect(try limits.refusal([address], now: at(3)) == nil)
        }
    }

    @Test(arguments: StorageBackends.all) func pruningDeletesOnlyWhatNoWindowCounts(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let limits = store.repositories().rateLimits
            let address = key(count: 2, seconds: 600)
            try limits.take([address], now: at(0))
            try limits.take([address], now: at(100))
            try limits.take([key("192.0.2.9")], now: at(5))
            // The events at 0 and 5, and the key last checked at 5; not the key checked at 100.
            #expect(try limits.prune(before: at(50)) == 3)
            #expect(try limits.refusal([address], now: at(101)) == nil)
            try limits.take([address], now: at(101))
            #expect(try limits.refusal([address], now: at(102)) == RateLimitReached(key: address, retryAfter: 598))
            #expect(try limits.prune(before: at(50)) == 0)
            #expect(try limits.prune(before: at(1_000)) == 3)
            #expect(try limits.refusal([address], now: at(102)) == nil)
        }
    }

    @Test(arguments: StorageBackends.all) func aBadKeyIsRefusedAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let limits = store.repositories().rateLimits
            try limits.take([key()], now: at(0))
            let before = try store.dump()
            let bad = [
                key(""), key(String(repeating: "k", count: 201)), key(count: 0), key(count: 1_000_001),
                RateLimitKey(action: "", scope: "address", key: "a", count: 1, window: .seconds(1)),
                RateLimitKey(action: "code_redeem", scope: "address", key: "a", count: 1, window: .zero),
                RateLimitKey(action: "code_redeem", scope: "address", key: "a", count: 1, window: .seconds(367 * 86_400)),
            ]
            for key in bad {
                // The bad key second: the good one before it is not counted either.
                let error = try #require(throws: StoreError.self) { try limits.take([self.key(), key], now: at(1)) }
                #expect(error.code == .invalid)
                #expect(throws: StoreError.self) { try limits.refusal([key], now: at(1)) }
            }
            #expect(throws: StoreError.self) { try limits.take([key()], now: Date(timeIntervalSince1970: -1)) }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func takesAtOnceFromManyConnectionsStopAtTheLimit(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = key("7", scope: "player", count: 5), address = key(count: 30)
            let now = at(0)
            let results = raceConnections(store, 24) { _, repositories in
                try repositories.rateLimits.take([player, address], now: now)
            }
            #expect(results.filter { (try? $0.get()) != nil }.count == 5)
            #expect(results.filter { if case .failure(let error) = $0 { error as? RateLimitReached == RateLimitReached(key: player, retryAfter: 60) } else { false } }.count == 19)
            // The address counted the five that passed, and only those.
            let limits = store.repositories().rateLimits
            for index in 0..<25 { try limits.take([key("\(index + 100)", scope: "player", count: 5), address], now: now) }
            #expect(try limits.refusal([address], now: now) != nil)
        }
    }
}
