/// One of the road's three lanes. Lanes are numbered from the player's left.
public enum Lane: Int, CaseIterable, Sendable, Codable, Comparable {
    case left = 0
    case middle = 1
    case right = 2

    public static func < (a: Lane, b: Lane) -> Bool { a.rawValue < b.rawValue }

    /// The lane one step in `direction`, or nil at the edge of the road.
    @inlinable
    public func moved(_ direction: Direction) -> Lane? {
        Lane(rawValue: rawValue + direction.offset)
    }
}

/// A sideways move the player asks for.
public enum Direction: String, CaseIterable, Sendable, Codable {
    case left
    case right

    @inlinable
    public var offset: Int { self == .left ? -1 : 1 }
}

/// A set of lanes in three bits (bit n = lane n). Used both for the cars in a row
/// and for the lanes that are safe, so neither ever needs a heap allocation.
public struct LaneSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0b111 }

    public static let left = LaneSet(rawValue: 0b001)
    public static let middle = LaneSet(rawValue: 0b010)
    public static let right = LaneSet(rawValue: 0b100)
    public static let none: LaneSet = []
    public static let all: LaneSet = [.left, .middle, .right]

    @inlinable
    public init(lane: Lane) { self.init(rawValue: 1 << UInt8(lane.rawValue)) }

    @inlinable
    public init<S: Sequence>(lanes: S) where S.Element == Lane {
        self.init(rawValue: lanes.reduce(0) { $0 | (1 << UInt8($1.rawValue)) })
    }

    @inlinable
    public func contains(_ lane: Lane) -> Bool { rawValue & (1 << UInt8(lane.rawValue)) != 0 }

    @inlinable
    public var count: Int { rawValue.nonzeroBitCount }

    /// The lanes not in this set.
    @inlinable
    public var complement: LaneSet { LaneSet(rawValue: ~rawValue) }

    /// The lanes, left to right.
    public var lanes: [Lane] { Lane.allCases.filter(contains) }

    /// Left to right, `X` for a member and `.` otherwise: "X.X".
    public var description: String {
        String(Lane.allCases.map { contains($0) ? "X" : "." })
    }
}
