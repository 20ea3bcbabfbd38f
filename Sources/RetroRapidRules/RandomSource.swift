/// The road's random numbers: xoshiro256** seeded through SplitMix64, both fixed
/// algorithms (Blackman and Vigna), so one seed gives the same road on every machine
/// and every release. Never the system generator for game content: its algorithm
/// is not ours to fix. Changing anything here changes every stored game's replay,
/// so it needs a new `GameRules.version`.
public struct SplitMix64: Sendable, Equatable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

public struct Xoshiro256StarStar: Sendable, Equatable {
    @usableFromInline var s0, s1, s2, s3: UInt64

    /// Expands a 64-bit seed into the 256-bit state with SplitMix64, as the authors advise.
    public init(seed: UInt64) {
        var seeder = SplitMix64(seed: seed)
        s0 = seeder.next()
        s1 = seeder.next()
        s2 = seeder.next()
        s3 = seeder.next()
    }

    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, 45)
        return result
    }

    /// A number in 0..<bound from the high bits (multiply-shift, no division).
    /// Its bias is below 2^-56 for our small bounds, and it is the same everywhere.
    @inlinable
    public mutating func next(below bound: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: ((next() >> 32) &* UInt64(bound)) >> 32)
    }

    @inlinable
    func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 &- k)) }
}
