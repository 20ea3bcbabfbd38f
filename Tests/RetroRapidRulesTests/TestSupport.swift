@testable import RetroRapidRules

/// A road from a picture, top row first: "X.." is a car in the left lane.
func road(_ picture: String...) -> Road {
    precondition(picture.count == Road.rowCount)
    return Road(rows: picture.map { row in
        LaneSet(lanes: row.enumerated().compactMap { $0.element == "X" ? Lane(rawValue: $0.offset) : nil })
    })
}

/// A seed whose generator draws `row` as its first row at `level`, so a scene's next
/// step is known. Found by search, so it follows the generator instead of pinning it.
func seed(whoseFirstRowIs row: LaneSet, level: SpeedLevel = .fast) -> UInt64 {
    for seed in UInt64(1)... {
        var generator = RoadGenerator(seed: seed, traffic: level.traffic)
        if generator.nextRow() == row { return seed }
    }
    fatalError("unreachable")
}

extension Array where Element == GameEvent {
    var frames: [StepFrame] { compactMap { if case .frame(let f) = $0 { f } else { nil } } }
}
