import Testing
@testable import RetroRapidRules

struct RoadTests {
    @Test func advanceMovesEveryRowDownAndReturnsTheRowThatLeft() {
        var r = road("X..", ".X.", "..X", "...", "X.X", "XX.", ".XX")
        let left = r.advance(entering: .middle)
        #expect(left == [.middle, .right])
        #expect(r == road(".X.", "X..", ".X.", "..X", "...", "X.X", "XX."))
        #expect(r.playerRow == [.left, .middle])
        #expect(r.nextRow == [.left, .right])
    }

    @Test func aNewRoadIsEmpty() {
        #expect(Road().rows.allSatisfy { $0 == .none })
    }
}

struct RoadGeneratorTests {
    /// Pins the road seed 2026 gives at Fast, so an accidental change to the generator
    /// (which would change every stored game's replay) cannot go unnoticed.
    @Test func aSeedAlwaysGivesTheSameRoad() {
        var generator = RoadGenerator(seed: 2026, traffic: SpeedLevel.fast.traffic)
        let rows = (0..<24).map { _ in generator.nextRow().description }.joined(separator: " ")
        #expect(rows == Self.pinnedRoad)
    }
    static let pinnedRoad = ".X. ... ..X X.X ..X ..X X.X ..X X.X ... X.X ... ..X ..X X.. XX. ... ... ..X X.. ... ... .X. ..."

    @Test func differentSeedsGiveDifferentRoads() {
        func first(_ seed: UInt64) -> [LaneSet] {
            var generator = RoadGenerator(seed: seed, traffic: SpeedLevel.fast.traffic)
            return (0..<40).map { _ in generator.nextRow() }
        }
        #expect(first(1) != first(2))
    }

    @Test(arguments: SpeedLevel.allCases)
    func noRowIsEverFullAndEveryPairKeepsThePromise(level: SpeedLevel) {
        for seed in UInt64(1)...2_000 {
            var generator = RoadGenerator(seed: seed, traffic: level.traffic)
            var earlier = LaneSet.none
            for _ in 0..<500 {
                let row = generator.nextRow()
                #expect(row != .all, "seed \(seed) drew a full row")
                #expect(RoadGenerator.keepsPromise(earlier: earlier, later: row), "seed \(seed): \(earlier) then \(row)")
                earlier = row
            }
        }
    }

    @Test func thePromiseRefusesTraps() {
        // After an empty row, a row with only the right lane open leaves a left-lane player no way out.
        #expect(!RoadGenerator.keepsPromise(earlier: .none, later: [.left, .middle]))
        #expect(!RoadGenerator.keepsPromise(earlier: .none, later: [.middle, .right]))
        // A car in the middle walls the left lane off from the right: both must stay open.
        #expect(!RoadGenerator.keepsPromise(earlier: .middle, later: .left))
        #expect(RoadGenerator.keepsPromise(earlier: .middle, later: .middle))
        // A full row is never allowed.
        #expect(!RoadGenerator.keepsPromise(earlier: .none, later: .all))
        // What stays allowed keeps the road varied.
        #expect(RoadGenerator.keepsPromise(earlier: .none, later: [.left, .right]))
        #expect(RoadGenerator.keepsPromise(earlier: .left, later: [.left, .middle]))
    }

    @Test func fasterLevelsHaveMoreTraffic() {
        func cars(_ level: SpeedLevel) -> Int {
            var generator = RoadGenerator(seed: 99, traffic: level.traffic)
            return (0..<20_000).reduce(0) { total, _ in total + generator.nextRow().count }
        }
        #expect(cars(.cruise) < cars(.fast))
        #expect(cars(.fast) < cars(.rapid))
    }
}
