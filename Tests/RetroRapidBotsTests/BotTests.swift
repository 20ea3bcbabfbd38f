import Testing
import RetroRapidBots
import RetroRapidRules

struct CueBotTests {
    @Test func itStaysWhenItsLaneIsSafeAndOtherwiseGoesToTheNearestSafeLane() {
        var bot = CueBot()
        bot.receive(.cue(safeLanes: [.left, .middle]))
        #expect(bot.nextMoves() == .stay)
        bot.receive(.cue(safeLanes: [.left, .right]))
        #expect(bot.nextMoves() == BotMoves(direction: .left, count: 1))
        bot.receive(.moved(to: .left, safe: true))
        bot.receive(.cue(safeLanes: [.right]))
        #expect(bot.nextMoves() == BotMoves(direction: .right, count: 2))
    }

    @Test func theAudioOnlyFilterNeverPassesAFrame() {
        struct Spy: Bot {
            var frames = 0
            mutating func receive(_ event: GameEvent) { if case .frame = event { frames += 1 } }
            mutating func nextMoves() -> BotMoves { .stay }
        }
        var bot = AudioOnly(Spy())
        let (_, _) = Simulation.play(seed: 3, level: .fast, maxSteps: 200, bot: &bot)
        #expect(bot.inner.frames == 0)
    }
}

struct PerfectBotTests {
    @Test func itLeavesALaneThatIsAboutToBeHit() {
        var bot = PerfectBot()
        let frame = StepFrame(step: 1, road: Road(rows: [.none, .none, .none, .none, .none, .middle, .none]),
                              lane: .middle, score: 0, stepInterval: 600)
        bot.receive(.frame(frame))
        let moves = bot.nextMoves()
        #expect(moves.count == 1)
    }

    @Test func itAvoidsALaneThatIsSafeNowButLeadsIntoAWall() {
        // Safe for one step in the left lane, but then the left lane is closed with the
        // middle blocked beside it: only the right lane has a way through.
        var bot = PerfectBot()
        let road = Road(rows: [.none, .none, .none, .none, [.left, .middle], .middle, .none])
        bot.receive(.frame(StepFrame(step: 1, road: road, lane: .middle, score: 0, stepInterval: 600)))
        #expect(bot.nextMoves() == BotMoves(direction: .right, count: 1))
    }
}

struct SimulationTests {
    @Test func aSimulatedGamesLogReplaysToItsResult() throws {
        func check<B: Bot>(_ bot: B) throws {
            var bot = bot
            let (result, game) = Simulation.play(seed: 11, level: .rapid, maxSteps: 3_000, bot: &bot)
            let replayed = try Replay.run(seed: 11, level: .rapid, log: game.log)
            #expect(replayed.score == result.score)
            #expect(replayed == game.state)
            #expect(!game.log.moves.isEmpty)
        }
        try check(PerfectBot())
        try check(AudioOnly(CueBot()))
        try check(RandomBot(seed: 11))
    }

    @Test func aSummaryCountsEveryGame() {
        let summary = Simulation(level: .cruise, bot: .random, seeds: 1...50, maxSteps: 300).run(threads: 2)
        #expect(summary.gamesPlayed == 50)
        #expect(summary.stepsSimulated > 50)
        #expect(summary.report.hasPrefix("level=cruise bot=random survived="))
    }
}
