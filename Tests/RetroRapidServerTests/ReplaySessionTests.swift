import Foundation
import RetroRapidBots
import RetroRapidRules
import RetroRapidDomain
import Testing
@testable import RetroRapidServer

/// `ReplaySession` against the live game it replays: bots play logs, a `GameSession` plays each
/// log move by move at its real deadlines (what a player's connection got), the finished game
/// is stored as a `GameRecord`, and the replay of that record must send the same messages, the
/// step frames byte for byte, on the same deadlines; a seek anywhere must land on the live
/// game's state there; pause and play move its clock.
@Suite("ReplaySession")
struct ReplaySessionTests {
    static let ms: Int64 = 1000
    static let start: Int64 = 5_000_000_000

    // MARK: - A live game, as the server ran it

    /// What the player of a live game got.
    struct LiveRun {
        /// Every message, in order.
        var messages: [ServerMessage] = []
        /// When each `step` message was sent, by step.
        var stepTimes: [Int: Int64] = [:]
        /// The game just after each step (0: the start), before the moves that followed it.
        var snapshots: [Int: ServerMessage.GameSnapshot] = [:]
        /// How many of `messages` had been sent by then: the rest is what follows step n.
        var sentBy: [Int: Int] = [:]
        var record: GameRecord!
    }

    /// Plays `script` (a bot-played log) on a live `GameSession`: its moves on time, each at a
    /// random moment of the interval after the step they follow; a game that has not crashed
    /// when the script runs out is quit (stored as abandoned), with any moves the script has
    /// after its last step made first.
    func playLive(seed: UInt64, level: SpeedLevel, script: InputLog, grace: Int = 150) throws -> LiveRun {
        let session = GameSession(id: 1, gameID: "live\(seed)", playerID: 9, level: level, seed: seed, practice: false,
                                  graceLimitMilliseconds: grace, startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                                  now: Self.start)
        var live = LiveRun()
        var timing = Xoshiro256StarStar(seed: seed &* 31 &+ 7)
        var nextMove = 0
        var lastTick = Self.start
        var ended: GameEndReason?
        live.snapshots[0] = session.snapshot
        while ended == nil {
            let step = session.game.state.step
            live.sentBy[step] = live.messages.count
            // The moves after this step, on time, somewhere before the next deadline.
            let deadline = session.wakeAt ?? lastTick
            while nextMove < script.moves.count, script.moves[nextMove].afterStep == step, ended == nil {
                let at = lastTick + Int64(timing.next(below: UInt32(max(1, deadline - lastTick))))
                let output = try session.move(script.moves[nextMove].direction, seenStep: step, now: at).get()
                live.messages += output.messages
                ended = output.ended
                nextMove += 1
            }
            if ended != nil { break }
            if step == script.steps {
                ended = session.end(.abandoned, now: deadline).ended
                break
            }
            let wake = try #require(session.wakeAt)
            let output = session.tick(now: wake)
            lastTick = wake
            live.messages += output.messages
            ended = output.ended
            if session.game.state.step > step {
                live.stepTimes[session.game.state.step] = wake
                live.snapshots[session.game.state.step] = session.snapshot
            }
            if case .crashHeld = session.phase {
                // A crash from ahead, held for the grace window: nothing else comes before its end.
                let release = session.tick(now: try #require(session.wakeAt))
                live.messages += release.messages
                ended = release.ended
                live.sentBy[session.game.state.step] = live.messages.count
            }
        }
        let game = session.record(endedAt: session.startedAt.addingTimeInterval(3600))
        // Stored as the database stores it: the log as text.
        live.record = GameRecord(
            id: 1, publicID: game.publicID, playerID: game.playerID, level: game.level, seed: game.seed,
            rulesVersion: game.rulesVersion, inputLog: game.inputLog.encoded, score: game.score, steps: game.steps,
            endReason: game.endReason, practice: game.practice, startedAt: game.startedAt, endedAt: game.endedAt,
            durationMilliseconds: game.durationMilliseconds)
        return live
    }

    /// A bot's log on `seed`: the perfect bot survives to `maxSteps`, the others crash.
    func botLog(_ kind: BotKind, seed: UInt64, level: SpeedLevel, maxSteps: Int = 400) -> InputLog {
        switch kind {
        case .perfect:
            var bot = PerfectBot()
            return Simulation.play(seed: seed, level: level, maxSteps: maxSteps, bot: &bot).1.log
        case .cues:
            var bot = AudioOnly(CueBot())
            return Simulation.play(seed: seed, level: level, maxSteps: maxSteps, bot: &bot).1.log
        case .random:
            var bot = RandomBot(seed: seed)
            return Simulation.play(seed: seed, level: level, maxSteps: maxSteps, bot: &bot).1.log
        }
    }

    /// Plays the replay out at its own deadlines: its messages and when each step came.
    func playOut(_ replay: ReplaySession) -> (messages: [ServerMessage], stepTimes: [Int: Int64], ended: GameEndReason?) {
        var messages: [ServerMessage] = []
        var times: [Int: Int64] = [:]
        var ended: GameEndReason?
        // A log has its steps and at most one tick after them: a replay that goes on is a bug.
        var ticks = 0
        while let wake = replay.wakeAt {
            ticks += 1
            if ticks > replay.lastStep + 2 {
                Issue.record("the replay of \(replay.gameID) went on past its \(replay.lastStep) steps")
                break
            }
            let before = replay.step
            let output = replay.tick(now: wake)
            messages += output.messages
            if replay.step > before { times[replay.step] = wake }
            if let reason = output.ended { ended = reason }
        }
        return (messages, times, ended)
    }

    static func isStep(_ message: ServerMessage) -> Bool {
        if case .step = message { true } else { false }
    }

    // MARK: - The same messages

    @Test(arguments: [BotKind.random, .cues, .perfect])
    func aReplaySendsExactlyWhatThePlayerGotOnTheSameDeadlines(bot: BotKind) throws {
        var reasons: Set<String> = []
        for seed in UInt64(1)...40 {
            let level = SpeedLevel.allCases[Int(seed % 3)]
            let live = try playLive(seed: seed, level: level, script: botLog(bot, seed: seed, level: level, maxSteps: 150))
            let replay = try ReplaySession(record: live.record, mode: .replay, now: Self.start)
            #expect(replay.gameID == live.record.publicID)
            let played = playOut(replay)
            // Everything the player got, in order, then where the replay stands at its end.
            #expect(Array(played.messages.dropLast()) == live.messages, "seed \(seed), \(bot)")
            #expect(played.messages.last == .replayState(gameID: replay.gameID, step: live.record.steps, playing: false, ended: true))
            // Byte for byte: each step frame as the wire has it.
            let liveFrames = live.messages.filter(Self.isStep).map { $0.encoded() }
            let replayFrames = played.messages.filter(Self.isStep).map { $0.encoded() }
            #expect(liveFrames.count == live.record.steps)
            #expect(replayFrames == liveFrames, "seed \(seed), \(bot)")
            #expect(played.stepTimes == live.stepTimes)
            // Held at the end, not over: a seek still works, and its host keeps the seat.
            #expect(played.ended == nil)
            #expect(replay.ended && !replay.isOver && replay.wakeAt == nil)
            reasons.insert(live.record.endReason.rawValue)
            if let crash = live.messages.last, case .crash(let kind, _, _, _) = crash { reasons.insert(kind.rawValue) }
        }
        // The runs covered what they are meant to: the random bot crashes both ways, the others
        // survive the road until they quit.
        if bot == .random { #expect(reasons.isSuperset(of: ["crash", "ahead", "side"])) } else { #expect(reasons == ["abandoned"]) }
    }

    @Test func movesAfterTheLastStepOfAQuitGameAreReplayedBeforeItsEnd() throws {
        // Two steps, then a move and a bump after the second, then the player quit.
        let script = InputLog(steps: 2, moves: [InputLog.Entry(afterStep: 0, direction: .left),
                                                InputLog.Entry(afterStep: 2, direction: .left)])
        for seed in UInt64(1)...200 {
            guard let state = try? Replay.run(seed: seed, level: .cruise, log: script), !state.isOver else { continue }
            let live = try playLive(seed: seed, level: .cruise, script: script)
            #expect(live.record.endReason == .abandoned)
            let replay = try ReplaySession(record: live.record, mode: .replay, now: Self.start)
            let played = playOut(replay)
            #expect(Array(played.messages.dropLast()) == live.messages)
            #expect(live.messages.last == .bump(.left))
            // The bump comes one interval after step 2, where step 3 would have been.
            #expect(played.messages.suffix(2).first == .bump(.left))
            return
        }
        Issue.record("no seed survived the script")
    }

    @Test func aGameWithLateMovesReplaysToTheFramesThePlayerWasLeftWith() throws {
        // Moves at random moments, some naming the step before (the grace rule honours those
        // within its window): the log keeps the moves as they were applied, so the replay
        // sends each step as it finally stood, without the version a late move replaced.
        var revisions = 0
        for seed in UInt64(1)...60 {
            let session = GameSession(id: 1, gameID: "g\(seed)", playerID: 9, level: .fast, seed: seed, practice: true,
                                      graceLimitMilliseconds: 150, startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                                      now: Self.start)
            var random = Xoshiro256StarStar(seed: seed)
            var messages: [ServerMessage] = []
            var ended: GameEndReason?
            var lastStep = Self.start
            while ended == nil, session.game.state.step < 300 {
                let wake = try #require(session.wakeAt)
                if random.next(below: 3) == 0, session.game.state.step > 0 {
                    // The step before (late: graced within the window) or the current one.
                    let seen = session.game.state.step - Int(random.next(below: 2))
                    let at = lastStep + Int64(random.next(below: 200)) * Self.ms
                    if at < wake, case .success(let output) = session.move(random.next(below: 2) == 0 ? .left : .right,
                                                                          seenStep: seen, now: at) {
                        messages += output.messages
                        ended = output.ended
                        continue
                    }
                }
                let stepBefore = session.game.state.step
                let output = session.tick(now: wake)
                if session.game.state.step > stepBefore { lastStep = wake }
                messages += output.messages
                ended = output.ended
            }
            if ended == nil { ended = session.end(.abandoned, now: session.wakeAt ?? lastStep).ended }
            let game = session.record(endedAt: session.startedAt.addingTimeInterval(600))
            let record = GameRecord(id: 1, publicID: "g\(seed)", playerID: 9, level: .fast, seed: seed, rulesVersion: game.rulesVersion,
                                    inputLog: game.inputLog.encoded, score: game.score, steps: game.steps, endReason: game.endReason,
                                    practice: true, startedAt: game.startedAt, endedAt: game.endedAt,
                                    durationMilliseconds: game.durationMilliseconds)
            revisions += messages.filter { if case .stepRevised = $0 { true } else { false } }.count
            // The frame the player was left with for each step the game kept.
            var lastFrame: [Int: [UInt8]] = [:]
            for message in messages {
                if case .step(let frame, _, _) = message { lastFrame[frame.step] = message.encoded() }
            }
            let played = playOut(try ReplaySession(record: record, mode: .replay, now: Self.start))
            var replayed: [Int: [UInt8]] = [:]
            for message in played.messages {
                if case .step(let frame, _, _) = message {
                    #expect(replayed[frame.step] == nil, "a replay sends each step once")
                    replayed[frame.step] = message.encoded()
                }
            }
            #expect(!played.messages.contains { if case .stepRevised = $0 { true } else { false } })
            #expect(replayed.count == record.steps)
            if record.steps > 0 {
                for step in 1...record.steps { #expect(replayed[step] == lastFrame[step], "seed \(seed) step \(step)") }
            }
            let crashes = messages.filter { if case .crash = $0 { true } else { false } }
            #expect(played.messages.filter { if case .crash = $0 { true } else { false } } == crashes)
        }
        #expect(revisions > 0, "no late move was graced: the test proved nothing about them")
    }

    // MARK: - Seek

    @Test func aSeekLandsOnTheLiveGamesStateAndPlaysOnAsItDid() throws {
        for (seed, bot) in [(UInt64(3), BotKind.random), (8, .cues), (11, .random), (5, .perfect)] {
            let live = try playLive(seed: seed, level: .rapid, script: botLog(bot, seed: seed, level: .rapid, maxSteps: 80))
            let replay = try ReplaySession(record: live.record, mode: .replay, now: Self.start)
            for step in 0...live.record.steps {
                let now = Self.start + Int64(step) * 1_000 * Self.ms
                var snapshot = try replay.seek(step: step, now: now).get()
                #expect(replay.step == step)
                // Playing (the replay was never paused) unless the seek landed on the end; the
                // live game was never paused.
                #expect(snapshot.paused == replay.ended)
                snapshot.paused = false
                #expect(snapshot == live.snapshots[step], "seed \(seed) step \(step)")
                if !replay.ended { #expect(replay.wakeAt == now + Int64(snapshot.interval) * Self.ms) }
                // From there on, the rest of what the player got.
                if step % 7 == 0 || step == live.record.steps {
                    let rest = playOut(replay)
                    let sentBy = try #require(live.sentBy[step])
                    #expect(Array(rest.messages.dropLast()) == Array(live.messages[sentBy...]), "seed \(seed) from step \(step)")
                    // Played out now, and held: play starts it again, and seek still works.
                    #expect(replay.ended)
                    #expect(replay.play(now: now) == true)
                }
            }
        }
    }

    @Test func aSeekOutOfRangeIsRefusedAndChangesNothing() throws {
        let live = try playLive(seed: 4, level: .fast, script: botLog(.random, seed: 4, level: .fast))
        let replay = try ReplaySession(record: live.record, mode: .replay, now: Self.start)
        _ = replay.tick(now: replay.wakeAt!)
        let before = (replay.snapshot, replay.wakeAt)
        for bad in [-1, live.record.steps + 1, Int.max] {
            guard case .failure(let error) = replay.seek(step: bad, now: Self.start + 9_000 * Self.ms) else {
                Issue.record("seek to \(bad) was accepted")
                continue
            }
            #expect(error.code == .stepOutOfRange)
            #expect(error.message.contains("0 to \(live.record.steps)"))
        }
        #expect(replay.snapshot == before.0 && replay.wakeAt == before.1)
    }

    // MARK: - Pause and play

    @Test func pauseHoldsTheReplayAndPlayGoesOnAWholeIntervalLater() throws {
        let live = try playLive(seed: 6, level: .fast, script: botLog(.perfect, seed: 6, level: .fast, maxSteps: 20))
        let replay = try ReplaySession(record: live.record, mode: .replay, now: Self.start)
        #expect(replay.playing && replay.wakeAt == Self.start + 600 * Self.ms)
        #expect(replay.tick(now: Self.start + 599 * Self.ms) == GameSession.Output())
        _ = replay.tick(now: Self.start + 600 * Self.ms)
        #expect(replay.step == 1)
        let pausedAt = Self.start + 800 * Self.ms
        replay.pause(now: pausedAt)
        #expect(!replay.playing && replay.wakeAt == nil && replay.snapshot.paused)
        #expect(replay.replayState == .replayState(gameID: replay.gameID, step: 1, playing: false, ended: false))
        #expect(replay.tick(now: pausedAt + 60_000_000) == GameSession.Output())
        #expect(replay.step == 1)
        replay.pause(now: pausedAt + 1)  // again: still held, nothing else
        #expect(replay.wakeAt == nil)
        let playAt = Self.start + 90_000 * Self.ms
        #expect(replay.play(now: playAt) == false)
        #expect(replay.wakeAt == playAt + 600 * Self.ms)
        #expect(replay.play(now: playAt + 100 * Self.ms) == false)  // already playing: the clock stays
        #expect(replay.wakeAt == playAt + 600 * Self.ms)
        let output = replay.tick(now: playAt + 600 * Self.ms)
        #expect(output.messages.filter(Self.isStep) == [live.messages.filter(Self.isStep)[1]])
        // A host that falls behind gets one step, not a burst.
        _ = replay.tick(now: playAt + 5_000 * Self.ms)
        #expect(replay.step == 3 && replay.wakeAt == playAt + 5_600 * Self.ms)
    }

    @Test func atTheEndTheReplayIsHeldAndPlayStartsItAgain() throws {
        let live = try playLive(seed: 2, level: .cruise, script: botLog(.random, seed: 2, level: .cruise))
        let replay = try ReplaySession(record: live.record, mode: .replay, now: Self.start)
        _ = playOut(replay)
        #expect(replay.ended && !replay.playing && replay.wakeAt == nil)
        #expect(replay.replayState == .replayState(gameID: replay.gameID, step: live.record.steps, playing: false, ended: true))
        let again = Self.start + 100_000 * Self.ms
        #expect(replay.play(now: again) == true)
        #expect(replay.step == 0 && !replay.ended && replay.playing)
        #expect(replay.wakeAt == again + 800 * Self.ms)
        // A seek after the end goes back without playing: the player presses play.
        _ = playOut(replay)
        _ = try replay.seek(step: 1, now: again).get()
        #expect(replay.step == 1 && !replay.ended && replay.wakeAt == nil)
    }

    @Test func aReplaysPictureNamesTheStoredGamesRoadAtEveryPosition() throws {
        var record = try #require(try playLive(seed: 3, level: .fast, script: botLog(.cues, seed: 3, level: .fast, maxSteps: 20)).record)
        for road in [GameRoad.daily(UTCDay("2026-12-03")!), .ghost, .random] {
            record.road = road
            let replay = try ReplaySession(record: record, mode: .replay, now: Self.start)
            #expect(replay.snapshot.roadKind == road)
            _ = try replay.seek(step: 5, now: Self.start).get()
            #expect(replay.snapshot.roadKind == road && replay.snapshot.step == 5)
        }
    }

    @Test func aGameOfNoStepsIsEndedFromTheStart() throws {
        let replay = try ReplaySession(gameID: "empty", level: .fast, seed: 1, log: InputLog(), practice: false,
                                       endReason: .abandoned, mode: .replay, now: Self.start)
        #expect(replay.ended && replay.wakeAt == nil)
        #expect(replay.play(now: Self.start) == true)
        #expect(replay.wakeAt == nil)
        #expect(try replay.seek(step: 0, now: Self.start).get().step == 0)
    }

    // MARK: - Ghost

    @Test func aGhostSaysItsLaneAndScoreAtEachStepAndHowItEnded() throws {
        var endings: Set<ServerMessage.GhostState> = []
        for (seed, bot) in [(UInt64(1), BotKind.random), (2, .random), (3, .random), (4, .random), (5, .random),
                            (6, .random), (7, .cues), (9, .perfect)] {
            let live = try playLive(seed: seed, level: .fast, script: botLog(bot, seed: seed, level: .fast, maxSteps: 60))
            let ghost = try ReplaySession(record: live.record, mode: .ghost, now: Self.start)
            let played = playOut(ghost)
            #expect(played.stepTimes == live.stepTimes)
            let frames = live.messages.compactMap { if case .step(let frame, _, _) = $0 { frame } else { nil } }
            let ghosts = played.messages.compactMap {
                if case .ghost(let step, let lane, let score, let state) = $0 { (step, lane, score, state) } else { nil }
            }
            #expect(ghosts.count == played.messages.count, "a ghost sends nothing but ghost messages")
            // One a step, and one more for moves after the last step (a side crash).
            #expect(ghosts.count == frames.count || ghosts.count == frames.count + 1)
            for (frame, message) in zip(frames, ghosts) {
                #expect(message.0 == frame.step && message.1 == frame.lane && message.2 == frame.score)
            }
            #expect(Array(ghosts.dropLast().map(\.3)).allSatisfy { $0 == .racing })
            let last = try #require(ghosts.last)
            #expect(last.0 == live.record.steps && last.2 == live.record.score)
            switch live.messages.last {
            case .crash(_, let lane, _, _):
                #expect(last.3 == .crashed && last.1 == lane)
            default:
                #expect(last.3 == .left)
            }
            #expect(played.ended == live.record.endReason)
            // Over at its end, and it stays so (a ghost does not start again).
            #expect(ghost.isOver && ghost.wakeAt == nil)
            #expect(ghost.play(now: Self.start) == false && ghost.wakeAt == nil)
            endings.insert(last.3)
        }
        #expect(endings == [.crashed, .left])
    }

    @Test func aGhostMessageIsItsStepLaneScoreAndState() {
        let bytes = ServerMessage.ghost(step: 12, lane: .right, score: 5, state: .racing).encoded()
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"type":"ghost","step":12,"lane":2,"score":5,"state":"racing"}"#)
        let state = ServerMessage.replayState(gameID: "abc", step: 120, playing: false, ended: true).encoded()
        #expect(String(decoding: state, as: UTF8.self) == #"{"type":"replayState","gameId":"abc","step":120,"playing":false,"ended":true}"#)
    }

    // MARK: - Games that cannot be replayed

    @Test func aStoredGameThatDoesNotReplayIsRefusedUpFront() throws {
        let good = try playLive(seed: 1, level: .fast, script: botLog(.random, seed: 1, level: .fast)).record!
        var otherRules = good
        otherRules.rulesVersion = GameRules.version + 1
        #expect(throws: ReplaySession.Failure.notReplayable(.unsupportedRulesVersion(GameRules.version + 1))) {
            try ReplaySession(record: otherRules, mode: .replay, now: Self.start)
        }
        var garbled = good
        garbled.inputLog = "x:1L"
        #expect(throws: ReplaySession.Failure.self) { try ReplaySession(record: garbled, mode: .replay, now: Self.start) }
        var beyondTheCrash = good
        beyondTheCrash.inputLog = "\(good.steps + 5)" + good.inputLog.drop { $0 != ":" }
        #expect(throws: ReplaySession.Failure.notReplayable(.inputAfterGameOver(step: good.steps))) {
            try ReplaySession(record: beyondTheCrash, mode: .replay, now: Self.start)
        }
    }
}
