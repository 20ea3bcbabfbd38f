import Testing
@testable import RetroRapidRules

/// Plays a game with scripted pseudo-random moves (some late and graced), recording
/// every event; the same script always gives the same game.
func scriptedGame(seed: UInt64, level: SpeedLevel, steps: Int) throws -> (Game, [GameEvent]) {
    var game = Game(seed: seed, level: level)
    var events = EventRecorder()
    var script = Xoshiro256StarStar(seed: seed &+ 1)
    while game.state.step < steps, !game.state.isOver {
        // Head for the nearest lane the cue calls safe; one time in eight the move
        // arrives after the step it was meant for, inside the grace window.
        let safe = game.state.safeLanes
        let lane = game.state.lane
        let target = safe.contains(lane) ? lane : safe.lanes.min { abs($0.rawValue - lane.rawValue) < abs($1.rawValue - lane.rawValue) }
        let moves = target.map { movesBetween(from: lane, to: $0) } ?? []
        let late = !moves.isEmpty && script.next(below: 8) == 0
        if !late {
            for direction in moves { try game.move(direction, seenStep: game.state.step, into: &events) }
        }
        let seen = game.state.step
        try game.step(into: &events)
        if late {
            for direction in moves {
                let delay = Int(script.next(below: UInt32(game.graceWindow + 1)))
                #expect(try game.move(direction, seenStep: seen, millisecondsSinceStep: delay, into: &events) == .graced)
            }
        }
    }
    return (game, events.events)
}

/// The moves from one lane to another.
func movesBetween(from lane: Lane, to target: Lane) -> [Direction] {
    let distance = target.rawValue - lane.rawValue
    return Array(repeating: distance < 0 ? .left : .right, count: abs(distance))
}

struct ReplayTests {
    @Test func theSameSeedAndInputsGiveTheSameEventStream() throws {
        let (first, firstEvents) = try scriptedGame(seed: 314, level: .rapid, steps: 3_000)
        let (second, secondEvents) = try scriptedGame(seed: 314, level: .rapid, steps: 3_000)
        #expect(firstEvents == secondEvents)
        #expect(first.state == second.state)
        #expect(first.state.step == 3_000, "the scripted player follows the cues, so it survives")
        #expect(firstEvents.contains { if case .stepRevised = $0 { true } else { false } })
    }

    @Test(arguments: SpeedLevel.allCases)
    func replayingTheLogReachesTheSameStateAndScore(level: SpeedLevel) throws {
        for seed in UInt64(1)...40 {
            let (game, _) = try scriptedGame(seed: seed, level: level, steps: 1_500)
            let stored = try InputLog(encoded: game.log.encoded)
            let replayed = try Replay.run(seed: seed, level: level, log: stored)
            #expect(replayed == game.state, "seed \(seed)")
        }
    }

    @Test func aReplayWithoutLateMovesSendsTheSameEventsAsTheLiveGame() throws {
        var game = Game(seed: 77, level: .fast)
        var live = EventRecorder()
        while game.state.step < 500, !game.state.isOver {
            try game.step(into: &live)
            if !game.state.isOver, game.state.step % 7 == 0 {
                try game.move(game.state.step % 14 == 0 ? .left : .right, seenStep: game.state.step, into: &live)
            }
        }
        var replayed = EventRecorder()
        _ = try Replay.run(seed: 77, level: .fast, log: game.log, into: &replayed)
        #expect(replayed.events == live.events)
    }

    @Test func anotherRulesVersionIsRefused() {
        #expect(throws: Replay.Failure.unsupportedRulesVersion(GameRules.version + 1)) {
            try Replay.run(seed: 1, level: .fast, log: InputLog(), rulesVersion: GameRules.version + 1)
        }
    }

    @Test func aLogThatGoesOnAfterACrashIsRefused() throws {
        var game = Game(seed: 9, level: .rapid)
        var events = DiscardingSink()
        while !game.state.isOver { try game.step(into: &events) }
        let tooLong = InputLog(steps: game.log.steps + 1, moves: game.log.moves)
        #expect(throws: Replay.Failure.inputAfterGameOver(step: game.state.step)) {
            try Replay.run(seed: 9, level: .rapid, log: tooLong)
        }
    }
}
