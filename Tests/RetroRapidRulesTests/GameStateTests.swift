import Testing
@testable import RetroRapidRules

struct StepTests {
    @Test func aStepMovesCarsDownAndAddsTheNewRowOnTop() {
        let top = LaneSet.right
        var state = GameState(seed: seed(whoseFirstRowIs: top), level: .fast,
                              road: road("X..", "...", "...", "...", "...", "...", "..."), lane: .middle)
        var events = EventRecorder()
        state.advance(into: &events)
        #expect(state.road == road("..X", "X..", "...", "...", "...", "...", "..."))
        #expect(state.step == 1)
        #expect(events.events.frames.map(\.step) == [1])
    }

    @Test func eachCarLeavingPastThePlayerScoresOne() {
        var state = GameState(seed: seed(whoseFirstRowIs: .none), level: .fast,
                              road: road("...", "...", "...", "...", "...", "...", "X.X"), lane: .middle, score: 5)
        var events = EventRecorder()
        state.advance(into: &events)
        #expect(state.score == 7)
        #expect(events.events.frames.last?.score == 7)
    }

    @Test func aCarComingIntoThePlayersLaneIsACrash() {
        var state = GameState(seed: seed(whoseFirstRowIs: .none), level: .fast,
                              road: road("...", "...", "...", "...", "...", ".X.", "..."), lane: .middle, score: 3)
        var events = EventRecorder()
        state.advance(into: &events)
        #expect(state.status == .crashed(.ahead))
        #expect(Array(events.events.dropFirst()) == [
            .crash(.ahead, lane: .middle), .haptic(.crash), .gameOver(score: 3, steps: 1),
        ])
    }

    @Test func aStepThatMissesThePlayerSendsFrameCueAndStepHaptic() {
        var state = GameState(seed: seed(whoseFirstRowIs: .none), level: .fast,
                              road: road("...", "...", "...", "...", "X..", ".X.", "..."), lane: .left)
        var events = EventRecorder()
        state.advance(into: &events)
        #expect(state.status == .running)
        // Now the middle car is beside the player and the left car arrives next:
        // nothing is reachable that is free, because the middle blocks the way right.
        #expect(Array(events.events.dropFirst()) == [.cue(safeLanes: []), .haptic(.step)])
    }
}

struct SafeLaneTests {
    @Test func safeLanesAreFreeInTheArrivingRowAndReachable() {
        let open = GameState(seed: 1, level: .fast, road: road("...", "...", "...", "...", "...", "X..", "..."), lane: .middle)
        #expect(open.safeLanes == [.middle, .right])
        // A car beside the player blocks the way past it, even to a free lane.
        let walled = GameState(seed: 1, level: .fast, road: road("...", "...", "...", "...", "...", ".X.", ".X."), lane: .left)
        #expect(walled.safeLanes == [.left])
        let walledRight = GameState(seed: 1, level: .fast, road: road("...", "...", "...", "...", "...", "X..", ".X."), lane: .right)
        #expect(walledRight.safeLanes == [.right])
        // Two lanes over is safe when the lane between is free now.
        let far = GameState(seed: 1, level: .fast, road: road("...", "...", "...", "...", "...", ".XX", "..."), lane: .right)
        #expect(far.safeLanes == [.left])
    }
}

struct MoveTests {
    @Test func aMoveChangesLaneAtOnceAndSaysWhetherTheLaneIsSafe() {
        var state = GameState(seed: 1, level: .fast, road: road("...", "...", "...", "...", "...", "X..", "..."), lane: .middle)
        var events = EventRecorder()
        state.move(.left, into: &events)
        #expect(state.lane == .left)
        #expect(events.events == [.moved(to: .left, safe: false), .haptic(.move)])
        events.removeAll()
        state.move(.right, into: &events)
        #expect(events.events == [.moved(to: .middle, safe: true), .haptic(.move)])
    }

    @Test(arguments: [(Lane.left, Direction.left), (Lane.right, Direction.right)])
    func aMoveIntoTheEdgeIsABumpThatChangesNothing(lane: Lane, direction: Direction) {
        var state = GameState(seed: 1, level: .fast, road: Road(), lane: lane)
        let before = state
        var events = EventRecorder()
        state.move(direction, into: &events)
        #expect(state == before)
        #expect(events.events == [.bump(direction), .haptic(.bump)])
    }

    @Test func movingSidewaysIntoACarIsACrash() {
        var state = GameState(seed: 1, level: .fast, road: road("...", "...", "...", "...", "...", "...", "..X"), lane: .middle, score: 12, step: 40)
        var events = EventRecorder()
        state.move(.right, into: &events)
        #expect(state.status == .crashed(.side))
        #expect(events.events == [
            .moved(to: .right, safe: false), .crash(.side, lane: .right), .haptic(.crash), .gameOver(score: 12, steps: 40),
        ])
    }
}

struct SpeedTests {
    @Test func theStartingIntervalsAreCruiseFastRapid() {
        #expect(SpeedLevel.allCases.map(\.baseStepInterval) == [800, 600, 420])
        #expect(SpeedLevel.allCases.map(\.displayName) == ["Cruise", "Fast", "Rapid"])
    }

    @Test func speedUpSoonComesTenPointsBeforeTheSpeedUp() {
        var state = GameState(seed: seed(whoseFirstRowIs: .none), level: .fast,
                              road: road("...", "...", "...", "...", "...", "...", "X.."), lane: .middle, score: 89)
        var events = EventRecorder()
        state.advance(into: &events)
        #expect(events.events.contains(.speedUpSoon(atScore: 100)))
        #expect(!events.events.contains { if case .speedUp = $0 { true } else { false } })
    }

    @Test func everyHundredPointsTheStepGetsFaster() {
        var state = GameState(seed: seed(whoseFirstRowIs: .none), level: .fast,
                              road: road("...", "...", "...", "...", "...", "...", "X.X"), lane: .middle, score: 199,
                              stepInterval: 540, speedStage: 1)
        var events = EventRecorder()
        state.advance(into: &events)
        #expect(state.stepInterval == 486)
        #expect(state.speedStage == 2)
        #expect(events.events.contains(.speedUp(stepInterval: 486, stage: 2)))
        // The frame shows the interval that was in force for the step just taken.
        #expect(events.events.frames.first?.stepInterval == 540)
    }

    /// At the floor no speed-up (nor its warning) is announced: the interval would not change.
    /// Rapid reaches its 210 ms floor at stage 7 (420 378 340 306 275 247 222 210).
    @Test func noSpeedUpIsAnnouncedOnceTheIntervalIsAtTheFloor() {
        var interval = SpeedLevel.rapid.baseStepInterval
        var stages = 0
        while interval > SpeedLevel.rapid.minimumStepInterval {
            interval = SpeedLevel.rapid.interval(afterSpeedUpFrom: interval)
            stages += 1
        }
        #expect(stages == 7 && interval == 210)
        for score in [789, 799] {
            var state = GameState(seed: seed(whoseFirstRowIs: .none), level: .rapid,
                                  road: road("...", "...", "...", "...", "...", "...", "X.X"), lane: .middle,
                                  score: score, stepInterval: 210, speedStage: 7)
            var events = EventRecorder()
            state.advance(into: &events)
            #expect(state.score == score + 2)
            #expect(state.stepInterval == 210)
            #expect(state.speedStage == 7)
            #expect(!events.events.contains { if case .speedUp = $0 { true } else { false } })
            #expect(!events.events.contains { if case .speedUpSoon = $0 { true } else { false } })
            #expect(events.events.contains(.cue(safeLanes: state.safeLanes)))
        }
        // The last real one still comes: 222 ms at stage 6 becomes 210 ms at stage 7.
        var last = GameState(seed: seed(whoseFirstRowIs: .none), level: .rapid,
                             road: road("...", "...", "...", "...", "...", "...", "X.X"), lane: .middle,
                             score: 699, stepInterval: 222, speedStage: 6)
        var events = EventRecorder()
        last.advance(into: &events)
        #expect(events.events.contains(.speedUp(stepInterval: 210, stage: 7)))
    }

    @Test(arguments: SpeedLevel.allCases)
    func speedUpsStopAtTheFloor(level: SpeedLevel) {
        var interval = level.baseStepInterval
        for _ in 0..<50 { interval = level.interval(afterSpeedUpFrom: interval) }
        #expect(interval == level.baseStepInterval / 2)
        #expect(level.interval(afterSpeedUpFrom: level.baseStepInterval) == level.baseStepInterval * 9 / 10)
    }
}
