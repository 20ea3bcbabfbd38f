/// Relative weights of the rows the generator may draw: an empty row, each of the
/// three one-car rows, each of the three two-car rows. A full row is never drawn.
public struct TrafficProfile: Hashable, Sendable {
    public var emptyWeight: UInt32
    public var oneCarWeight: UInt32
    public var twoCarWeight: UInt32

    public init(emptyWeight: UInt32, oneCarWeight: UInt32, twoCarWeight: UInt32) {
        self.emptyWeight = emptyWeight
        self.oneCarWeight = oneCarWeight
        self.twoCarWeight = twoCarWeight
    }

    @inlinable
    func weight(of row: LaneSet) -> UInt32 {
        switch row.count {
        case 0: emptyWeight
        case 1: oneCarWeight
        case 2: twoCarWeight
        default: 0
        }
    }
}

/// Draws the rows that enter the road at the top, from a seed.
///
/// The road never sets a trap. Each new row must keep this promise against the row
/// drawn before it (the one that will be in the player's row just before it): from
/// every free lane of the earlier row, some lane at most one step away is free in
/// the new row and can be reached (staying put, or moving into a lane that is free
/// in the earlier row too). So wherever a player who has not crashed stands, a move
/// of at most one lane keeps them alive, and every lane the safe-lane cue names is on
/// a path that never ends. One-step cues are therefore all an audio-only player needs.
/// Tests prove the promise over many seeds instead of trusting this argument.
public struct RoadGenerator: Sendable, Equatable {
    public private(set) var random: Xoshiro256StarStar
    public let traffic: TrafficProfile
    /// The last row drawn (the road starts empty, so an empty row).
    public private(set) var previousRow: LaneSet = .none

    public init(seed: UInt64, traffic: TrafficProfile) {
        random = Xoshiro256StarStar(seed: seed)
        self.traffic = traffic
    }

    /// The next row to enter at the top.
    public mutating func nextRow() -> LaneSet {
        let allowed = RoadGenerator.allowedAfter(previousRow)
        var total: UInt32 = 0
        for pattern in 0..<UInt8(7) where allowed & (1 << pattern) != 0 {
            total &+= traffic.weight(of: LaneSet(rawValue: pattern))
        }
        var pick = random.next(below: total)
        var chosen = LaneSet.none
        for pattern in 0..<UInt8(7) where allowed & (1 << pattern) != 0 {
            let weight = traffic.weight(of: LaneSet(rawValue: pattern))
            if pick < weight {
                chosen = LaneSet(rawValue: pattern)
                break
            }
            pick -= weight
        }
        previousRow = chosen
        return chosen
    }

    /// Bit n set when the row with car pattern n may follow `earlier`.
    @inlinable
    static func allowedAfter(_ earlier: LaneSet) -> UInt8 {
        UInt8(truncatingIfNeeded: transitionTable >> (8 * UInt64(earlier.rawValue)))
    }

    /// Byte e of this number is `allowedAfter(e)`, computed once from `keepsPromise`.
    @usableFromInline
    static let transitionTable: UInt64 = {
        var table: UInt64 = 0
        for earlier in 0..<UInt8(8) {
            for later in 0..<UInt8(7) where keepsPromise(
                earlier: LaneSet(rawValue: earlier), later: LaneSet(rawValue: later)
            ) {
                table |= 1 << (8 * UInt64(earlier) + UInt64(later))
            }
        }
        return table
    }()

    /// The no-trap promise for one pair of consecutive rows (see the type's comment).
    public static func keepsPromise(earlier: LaneSet, later: LaneSet) -> Bool {
        if later == .all { return false }
        for lane in Lane.allCases where !earlier.contains(lane) {
            let escapes = [lane.moved(.left), lane, lane.moved(.right)].contains { target in
                guard let target, !later.contains(target) else { return false }
                return target == lane || !earlier.contains(target)
            }
            if !escapes { return false }
        }
        return true
    }
}
