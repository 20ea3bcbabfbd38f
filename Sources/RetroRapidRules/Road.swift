/// The visible road: `GameRules.visibleRows` rows of three cells, row 0 at the top and
/// the last row the player's. Packed three bits a row into one integer, so a step is a
/// shift and a copy of the road costs nothing (the grace rule keeps one).
public struct Road: Hashable, Sendable, CustomStringConvertible {
    /// Bits 3r...3r+2 hold row r.
    public private(set) var bits: UInt32

    public static let rowCount = GameRules.visibleRows
    @usableFromInline static let mask: UInt32 = (1 << (3 * UInt32(rowCount))) - 1

    /// An empty road.
    public init() { bits = 0 }

    /// A road from its rows, top first (for tests and replays); extra rows are an error.
    public init(rows: [LaneSet]) {
        precondition(rows.count == Road.rowCount, "a road has \(Road.rowCount) rows")
        bits = 0
        for (index, row) in rows.enumerated() { bits |= UInt32(row.rawValue) << (3 * UInt32(index)) }
    }

    /// The cars in row `index` (0 = top).
    @inlinable
    public func row(_ index: Int) -> LaneSet {
        LaneSet(rawValue: UInt8(truncatingIfNeeded: bits >> (3 * UInt32(index))))
    }

    /// The row the player drives in.
    @inlinable
    public var playerRow: LaneSet { row(Road.rowCount - 1) }

    /// The row that enters the player's row at the next step.
    @inlinable
    public var nextRow: LaneSet { row(Road.rowCount - 2) }

    /// Every row, top first.
    public var rows: [LaneSet] { (0..<Road.rowCount).map(row) }

    /// Moves every car down one row and puts `entering` at the top.
    /// Returns the cars that left past the player's row (the overtaken ones).
    public mutating func advance(entering: LaneSet) -> LaneSet {
        let leaving = playerRow
        bits = ((bits << 3) & Road.mask) | UInt32(entering.rawValue)
        return leaving
    }

    public var description: String { rows.map(\.description).joined(separator: "\n") }
}
