import Testing
@testable import RetroRapidRules

struct PauseTests {
    @Test func aPausedGameTakesNoStepsOrMovesUntilResumed() throws {
        var game = Game(seed: 5, level: .cruise)
        var events = EventRecorder()
        try game.step(into: &events)
        try game.pause(into: &events)
        let paused = game.state
        #expect(throws: Game.InputError.paused) { try game.step(into: &events) }
        #expect(throws: Game.InputError.paused) { try game.move(.left, seenStep: 1, into: &events) }
        #expect(game.state == paused)
        try game.resume(into: &events)
        try game.step(into: &events)
        #expect(game.state.step == 2)
        #expect(events.events.filter { $0 == .paused || $0 == .resumed } == [.paused, .resumed])
    }
}

struct InputValidationTests {
    @Test func aMoveForAStepNotYetReachedIsRefused() throws {
        var game = Game(seed: 5, level: .cruise)
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(throws: Game.InputError.stepNotReached(seen: 2, current: 1)) {
            try game.move(.left, seenStep: 2, into: &events)
        }
        #expect(game.state.lane == .middle)
        #expect(game.log.moves.isEmpty)
    }

    @Test func aFinishedGameRefusesStepsAndMoves() throws {
        let crashing = road("...", "...", "...", "...", "...", ".X.", "...")
        var game = Game(seed: seed(whoseFirstRowIs: .none), state: GameState(seed: seed(whoseFirstRowIs: .none), level: .fast, road: crashing, lane: .middle))
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(game.state.isOver)
        let over = game.state
        #expect(throws: Game.InputError.gameOver) { try game.step(into: &events) }
        #expect(throws: Game.InputError.gameOver) { try game.move(.left, seenStep: 1, millisecondsSinceStep: 10_000, into: &events) }
        #expect(game.state == over)
    }
}

struct GraceRuleTests {
    /// The middle car arrives at the next step; the player is in the middle.
    func doomedGame(level: SpeedLevel = .fast, interval: Int? = nil) -> Game {
        let s = seed(whoseFirstRowIs: .none, level: level)
        return Game(seed: s, state: GameState(seed: s, level: level,
                                              road: road("...", "...", "...", "...", "...", ".X.", "..."),
                                              lane: .middle, stepInterval: interval))
    }

    @Test func aLateMoveWithinTheWindowIsAppliedBeforeTheStepItMissed() throws {
        var game = doomedGame()
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(game.state.status == .crashed(.ahead))
        events.removeAll()
        let timing = try game.move(.left, seenStep: 0, millisecondsSinceStep: 120, into: &events)
        #expect(timing == .graced)
        #expect(game.state.status == .running)
        #expect(game.state.lane == .left)
        #expect(game.state.step == 1)
        #expect(events.events.first == .stepRevised(step: 1))
        #expect(events.events.contains(.moved(to: .left, safe: true)))
        #expect(events.events.frames.map(\.lane) == [.left])
        #expect(game.log.moves == [InputLog.Entry(afterStep: 0, direction: .left)])
        #expect(game.log.steps == 1)
    }

    @Test func aLateMoveOutsideTheWindowDoesNotUndoTheStep() throws {
        var game = doomedGame()
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(throws: Game.InputError.gameOver) {
            try game.move(.left, seenStep: 0, millisecondsSinceStep: 151, into: &events)
        }
        #expect(game.state.status == .crashed(.ahead))
    }

    @Test func theWindowIsNeverMoreThanHalfAStep() throws {
        var game = doomedGame(level: .rapid, interval: 210)
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(game.graceWindow == 105)
        #expect(throws: Game.InputError.gameOver) {
            try game.move(.left, seenStep: 0, millisecondsSinceStep: 120, into: &events)
        }
        #expect(try game.move(.left, seenStep: 0, millisecondsSinceStep: 100, into: &events) == .graced)
    }

    @Test func aMoveOnTheCurrentStepClosesTheWindowForTheLastOne() throws {
        let s = seed(whoseFirstRowIs: .none)
        var game = Game(seed: s, state: GameState(seed: s, level: .fast, road: Road(), lane: .middle))
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(try game.move(.left, seenStep: 1, into: &events) == .onTime)
        #expect(try game.move(.right, seenStep: 0, millisecondsSinceStep: 10, into: &events) == .late)
        #expect(game.log.moves == [InputLog.Entry(afterStep: 1, direction: .left), InputLog.Entry(afterStep: 1, direction: .right)])
    }

    @Test func aLateMoveThatCrashesSidewaysTakesBackTheStep() throws {
        let s = seed(whoseFirstRowIs: .none)
        var game = Game(seed: s, state: GameState(seed: s, level: .fast,
                                                  road: road("...", "...", "...", "...", "...", "...", "X.."),
                                                  lane: .middle, step: 7))
        var events = EventRecorder()
        try game.step(into: &events)
        #expect(game.state.step == 8)
        events.removeAll()
        #expect(try game.move(.left, seenStep: 7, millisecondsSinceStep: 50, into: &events) == .graced)
        #expect(game.state.status == .crashed(.side))
        #expect(game.state.step == 7)
        #expect(events.events.last == .gameOver(score: 0, steps: 7))
    }
}

struct InputLogTests {
    @Test func theLogRoundTripsThroughItsText() throws {
        let log = InputLog(steps: 57, moves: [.init(afterStep: 3, direction: .left), .init(afterStep: 3, direction: .left), .init(afterStep: 10, direction: .right)])
        #expect(log.encoded == "57:3L,3L,10R")
        #expect(try InputLog(encoded: log.encoded) == log)
        #expect(try InputLog(encoded: "0:") == InputLog())
        #expect(try InputLog(encoded: "10:0L,10R").moves.map(\.afterStep) == [0, 10])
    }

    @Test(arguments: [
        ("", InputLog.DecodingError.malformed("no ':' after the step count")),
        ("x:", .malformed("the step count is not a whole number")),
        ("-1:", .malformed("the step count is not a whole number")),
        ("5:3X", .malformed("move 0 is '3X', expected a step number then L or R")),
        ("5:3L,", .malformed("move 1 is '', expected a step number then L or R")),
        ("5:4L,3R", .outOfOrder(entry: 1)),
        ("5:6L", .beyondLastStep(entry: 0)),
        // Numbers `encoded` never writes (each was accepted before, as the same log as "5:3L").
        ("+5:3L", .malformed("the step count is not a whole number")),
        ("05:3L", .malformed("the step count is not a whole number")),
        ("5:+3L", .malformed("move 0 is '+3L', expected a step number then L or R")),
        ("5:03L", .malformed("move 0 is '03L', expected a step number then L or R")),
        ("5:-0L", .malformed("move 0 is '-0L', expected a step number then L or R")),
        ("9223372036854775808:", .malformed("the step count is not a whole number")),
    ])
    func malformedLogsAreRefused(text: String, error: InputLog.DecodingError) {
        #expect(throws: error) { try InputLog(encoded: text) }
    }
}
