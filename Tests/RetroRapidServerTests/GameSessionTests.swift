import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import Testing
@testable import RetroRapidServer

/// `GameSession` with the real engine: steps on absolute deadlines, the held crash and the
/// grace rule, pause, resume, a dropped connection's wait, and what is saved.
@Suite("GameSession")
struct GameSessionTests {
    static let ms: Int64 = 1000
    static let start: Int64 = 1_000_000_000

    func session(seed: UInt64 = 7, level: SpeedLevel = .fast, grace: Int = 150) -> GameSession {
        GameSession(id: 1, gameID: "g1", playerID: 42, level: level, seed: seed, practice: false,
                    graceLimitMilliseconds: grace, startedAt: Date(timeIntervalSince1970: 1_800_000_000),
                    now: Self.start)
    }

    /// Ticks until the session has nothing due before `time`; returns everything it said.
    @discardableResult
    func run(_ session: GameSession, until time: Int64, ended: inout GameEndReason?) -> [ServerMessage] {
        var messages: [ServerMessage] = []
        while let wake = session.wakeAt, wake <= time {
            let output = session.tick(now: wake)
            messages += output.messages
            if let end = output.ended { ended = end }
        }
        return messages
    }

    /// Steps the session one step (at its deadline) and returns that step's messages.
    @discardableResult
    func stepOnce(_ session: GameSession) -> (messages: [ServerMessage], at: Int64) {
        let at = session.wakeAt!
        return (session.tick(now: at).messages, at)
    }

    func steps(_ messages: [ServerMessage]) -> [StepFrame] {
        messages.compactMap { if case .step(let frame, _, _) = $0 { frame } else { nil } }
    }

    // MARK: - Steps

    @Test func aMoveOrPauseBeforeTheStartDeadlineIsRefusedNotStartedAndChangesNothing() {
        // A race's session starts at its deadline (the countdown's end): here 3 s from "now".
        let game = session()
        let before = Self.start - 3_000_000
        for result in [game.move(.left, seenStep: 0, now: before), game.pause(now: before)] {
            guard case .failure(let error) = result else { Issue.record("accepted before the start: \(result)"); continue }
            #expect(error.code == .notStarted && error.message.contains("3000 ms"), "\(error)")
        }
        #expect(game.snapshot.lane == .middle && !game.snapshot.paused)
        // From the deadline on both are the game's as usual.
        guard case .success = game.move(.left, seenStep: 0, now: Self.start) else { Issue.record("refused at the deadline"); return }
        guard case .success = game.pause(now: Self.start + 1000) else { Issue.record("pause refused after the deadline"); return }
    }

    @Test func stepsComeOnAbsoluteDeadlinesEvenWhenTicksRunLate() {
        let game = session(level: .fast)
        #expect(game.wakeAt == Self.start + 600 * Self.ms)
        // Each tick runs 7 ms late; the next deadline is still the previous one plus 600 ms.
        for n in 1...5 {
            let due = game.wakeAt!
            #expect(due == Self.start + Int64(n) * 600 * Self.ms)
            let output = game.tick(now: due + 7 * Self.ms)
            #expect(steps(output.messages).map(\.step) == [n])
        }
    }

    @Test func aTickBeforeTheDeadlineDoesNothing() {
        let game = session()
        #expect(game.tick(now: Self.start + 599 * Self.ms) == GameSession.Output())
        #expect(game.game.state.step == 0)
    }

    @Test func aServerAWholeStepBehindDoesNotBurst() {
        let game = session(level: .fast)
        let output = game.tick(now: Self.start + 2000 * Self.ms)  // three deadlines missed
        #expect(steps(output.messages).count == 1)
        #expect(game.wakeAt == Self.start + 2600 * Self.ms)
    }

    @Test func eachStepIsOneMessageWithGridLaneScoreIntervalCueAndHaptic() throws {
        let game = session()
        let (messages, _) = stepOnce(game)
        let first = try #require(messages.first)
        guard case .step(let frame, let safeLanes, let haptic) = first else {
            Issue.record("expected a step message, got \(first)")
            return
        }
        #expect(frame.step == 1)
        #expect(frame.lane == .middle)
        #expect(frame.stepInterval == 600)
        #expect(safeLanes == game.game.state.safeLanes)
        #expect(haptic)
        #expect(messages.count == 1)
    }

    // MARK: - The held crash

    /// A session whose next step crashes from ahead if the player stays put, with the
    /// step before it already taken and sent.
    func sessionAboutToCrash(_ accept: (Road) -> Bool = { _ in true }) -> (GameSession, Road) {
        for seed in UInt64(1)...5000 {
            let game = session(seed: seed)
            while game.game.state.step < 200 {
                let state = game.game.state
                if state.road.nextRow.contains(state.lane) {
                    if accept(state.road) { return (game, state.road) }
                    break
                }
                stepOnce(game)
                guard case .running = game.phase else { break }
            }
        }
        fatalError("no seed found for the scene")
    }

    @Test func aCrashFromAheadIsHeldForTheGraceWindowThenSent() {
        let (game, _) = sessionAboutToCrash()
        let (messages, at) = stepOnce(game)
        #expect(messages.isEmpty)  // provisional: nothing sent yet
        #expect(game.phase == .crashHeld(until: at + 150 * Self.ms))
        #expect(game.wakeAt == at + 150 * Self.ms)
        #expect(game.tick(now: at + 149 * Self.ms).messages.isEmpty)
        let released = game.tick(now: at + 150 * Self.ms)
        #expect(released.ended == .crash)
        #expect(released.messages.count == 2)
        guard case .step(let frame, let safeLanes, let haptic) = released.messages[0],
              case .crash(let kind, let lane, let step, let score) = released.messages[1] else {
            Issue.record("expected step then crash, got \(released.messages)")
            return
        }
        #expect(safeLanes == .none && !haptic)
        #expect(kind == .ahead && lane == frame.lane && step == frame.step && score == frame.score)
        #expect(game.isOver)
    }

    @Test func aWindowOfZeroSendsTheCrashAtOnce() {
        for seed in UInt64(1)...500 {
            let game = session(seed: seed, grace: 0)
            var ended: GameEndReason?
            let messages = run(game, until: Self.start + 600_000 * Self.ms, ended: &ended)
            guard ended == .crash else { continue }
            #expect(messages.contains { if case .crash = $0 { true } else { false } })
            return
        }
        Issue.record("no seed crashed")
    }

    @Test func aLateMoveWithinTheWindowUndoesAHeldCrashWithoutStepRevised() throws {
        // The lane to the left must be free now and in the row arriving.
        let (game, road) = sessionAboutToCrash { road in
            !road.playerRow.contains(.left) && !road.nextRow.contains(.left)
        }
        let seen = game.game.state.step
        let (_, at) = stepOnce(game)
        let result = game.move(.left, seenStep: seen, now: at + 60 * Self.ms)
        let output = try result.get()
        #expect(output.ended == nil)
        #expect(game.phase == .running)
        // The client never saw the crash step, so it gets the move and then the step.
        guard case .moved(let lane, let safe, _) = output.messages.first else {
            Issue.record("expected moved first, got \(output.messages)")
            return
        }
        #expect(lane == .left && safe)
        #expect(!output.messages.contains { if case .stepRevised = $0 { true } else { false } })
        #expect(steps(output.messages).map(\.step) == [seen + 1])
        #expect(game.game.state.lane == .left)
        _ = road
    }

    @Test func aMoveAfterTheWindowLeavesTheCrashStanding() throws {
        let (game, _) = sessionAboutToCrash()
        let seen = game.game.state.step
        let (_, at) = stepOnce(game)
        // Too late for grace (151 ms): the crash stands and is sent now.
        let output = try game.move(.left, seenStep: seen, now: at + 151 * Self.ms).get()
        #expect(output.ended == .crash)
        #expect(output.messages.contains { if case .crash(.ahead, _, _, _) = $0 { true } else { false } })
    }

    @Test func pausingDuringAHeldCrashReleasesIt() throws {
        let (game, _) = sessionAboutToCrash()
        let (_, at) = stepOnce(game)
        let output = try game.pause(now: at + 10 * Self.ms).get()
        #expect(output.ended == .crash)
        #expect(game.isOver)
    }

    @Test func aGracedMoveIntoACarIsAFinalSideCrash() throws {
        let (game, _) = sessionAboutToCrash { $0.playerRow.contains(.left) }
        let seen = game.game.state.step
        let (_, at) = stepOnce(game)
        let output = try game.move(.left, seenStep: seen, now: at + 20 * Self.ms).get()
        #expect(output.ended == .crash)
        #expect(output.messages.contains { if case .crash(.side, .left, _, _) = $0 { true } else { false } })
        #expect(game.game.state.step == seen)  // the crash step never happened
    }

    @Test func aLateMoveOnASentStepComesWithStepRevised() throws {
        // A step that does not crash, then a late move naming the step before it.
        for seed in UInt64(1)...500 {
            let game = session(seed: seed)
            let (_, _) = stepOnce(game)
            let seen = game.game.state.step
            let state = game.game.state
            guard !state.road.nextRow.contains(state.lane), !state.road.playerRow.contains(.right),
                  !state.road.nextRow.contains(.right), state.lane != .right else { continue }
            let (sent, at) = stepOnce(game)
            guard !sent.isEmpty else { continue }
            let output = try game.move(.right, seenStep: seen, now: at + 30 * Self.ms).get()
            #expect(output.messages.first == .stepRevised(step: seen + 1))
            #expect(steps(output.messages).map(\.step) == [seen + 1])
            #expect(game.game.log.moves.last?.afterStep == seen)
            return
        }
        Issue.record("no seed gave the scene")
    }

    // MARK: - Bad moves change nothing

    @Test func movesNamingAStepNotReachedAreRefused() {
        let game = session()
        stepOnce(game)
        let before = game.game
        #expect(game.move(.left, seenStep: 2, now: Self.start + 700 * Self.ms).failureCode == .stepOutOfRange)
        #expect(game.move(.left, seenStep: -1, now: Self.start + 700 * Self.ms).failureCode == .stepOutOfRange)
        #expect(game.game.state == before.state && game.game.log == before.log)
    }

    @Test func movesWhilePausedOrAfterTheEndAreRefused() throws {
        let game = session()
        _ = try game.pause(now: Self.start).get()
        #expect(game.move(.left, seenStep: 0, now: Self.start).failureCode == .paused)
        _ = game.end(.abandoned, now: Self.start + Self.ms)
        #expect(game.move(.left, seenStep: 0, now: Self.start).failureCode == .gameOver)
        #expect(game.pause(now: Self.start).failureCode == .gameOver)
    }

    @Test func aMoveIntoTheEdgeIsABump() throws {
        let game = session()
        _ = try game.move(.left, seenStep: 0, now: Self.start).get()  // left lane now
        let output = try game.move(.left, seenStep: 0, now: Self.start).get()
        #expect(output.messages == [.bump(.left)])
    }

    // MARK: - Pause, resume, dropped connections

    @Test func aPausedGameTakesNoStepsAndResumesAFullStepLater() throws {
        let game = session()
        stepOnce(game)
        let paused = try game.pause(now: Self.start + 700 * Self.ms).get()
        #expect(paused.messages == [.paused(reason: .player)])
        #expect(game.wakeAt == nil)
        #expect(game.tick(now: Self.start + 60_000 * Self.ms).messages.isEmpty)
        #expect(game.pause(now: Self.start).failureCode == .alreadyPaused)
        let resumeAt = Self.start + 90_000 * Self.ms
        let resumed = try game.resume(now: resumeAt).get()
        #expect(resumed.messages == [.resumed(nextStepInMilliseconds: 600)])
        #expect(game.wakeAt == resumeAt + 600 * Self.ms)
        #expect(game.resume(now: resumeAt).failureCode == .notPaused)
    }

    /// A race's game is made at its start deadline, still to come (`RoomHost.launch`): a racer
    /// who drops during the countdown and resumes before the deadline keeps it, their first step
    /// one interval after it as every other racer's; the countdown is no play time.
    @Test func aGameResumedBeforeItsStartKeepsTheStartDeadline() throws {
        let game = session()  // starts at `start`; its first step is due at start + 600 ms
        game.detach(now: Self.start - 2_500 * Self.ms, deadline: Self.start + 60_000 * Self.ms)
        game.attach()
        let resumed = try game.resume(now: Self.start - 1_000 * Self.ms).get()
        #expect(resumed.messages == [.resumed(nextStepInMilliseconds: 1_600)])
        #expect(game.wakeAt == Self.start + 600 * Self.ms)
        #expect(steps(game.tick(now: Self.start + 600 * Self.ms).messages).map(\.step) == [1])
        #expect(game.checkpoint(now: Self.start + 600 * Self.ms)?.0.durationMilliseconds == 600)
        // Resumed after its start, it gets the usual full interval from now.
        let late = session()
        late.detach(now: Self.start - 2_500 * Self.ms, deadline: Self.start + 60_000 * Self.ms)
        late.attach()
        _ = try late.resume(now: Self.start + 100 * Self.ms).get()
        #expect(late.wakeAt == Self.start + 700 * Self.ms)
    }

    @Test func aDroppedConnectionPausesTheGameUntilItsDeadline() {
        let game = session()
        stepOnce(game)
        let deadline = Self.start + 61_000 * Self.ms
        game.detach(now: Self.start + Self.ms * 1000, deadline: deadline)
        #expect(game.isDisconnected)
        #expect(game.wakeAt == deadline)
        #expect(game.snapshot.paused)
        let output = game.tick(now: deadline)
        #expect(output.ended == .abandoned)
    }

    @Test func aPlayerWhoComesBackInTimeResumesWhereTheyWere() throws {
        let game = session()
        stepOnce(game)
        let step = game.game.state.step
        game.detach(now: Self.start + 1000 * Self.ms, deadline: Self.start + 61_000 * Self.ms)
        game.attach()
        #expect(game.phase == .paused(.player))
        #expect(game.wakeAt == nil)
        _ = try game.resume(now: Self.start + 30_000 * Self.ms).get()
        let (messages, _) = stepOnce(game)
        #expect(steps(messages).map(\.step) == [step + 1])
    }

    // MARK: - Saving

    @Test func theSavedGameReplaysToTheSameScoreAndCountsOnlyPlayTime() throws {
        let game = session(seed: 11)
        var ended: GameEndReason?
        run(game, until: Self.start + 3000 * Self.ms, ended: &ended)
        _ = try game.pause(now: Self.start + 3000 * Self.ms).get()
        _ = try game.resume(now: Self.start + 63_000 * Self.ms).get()  // a minute's pause
        run(game, until: Self.start + 66_000 * Self.ms, ended: &ended)
        let final = game.end(.shutdown, now: Self.start + 66_000 * Self.ms)
        let record = game.record(endedAt: game.startedAt.addingTimeInterval(66))
        #expect(record.endReason == (ended ?? final.ended))
        #expect(record.steps == record.inputLog.steps)
        let replayed = try Replay.run(seed: record.seed, level: record.level, log: record.inputLog)
        #expect(replayed.score == record.score && replayed.step == record.steps)
        #expect(record.durationMilliseconds <= 6000 + 1)
        #expect(record.publicID == "g1")
    }

    @Test func aCheckpointIsOfferedOnlyWhenTheLogChangedSinceTheLastOneSaved() throws {
        let game = session(seed: 11)
        #expect(game.checkpoint(now: Self.start) == nil)  // nothing played yet: the row's '0:' stands
        let (_, at) = stepOnce(game)
        let (first, size) = try #require(game.checkpoint(now: at))
        #expect(first.publicID == "g1" && first.steps == 1 && first.movesBefore == 0 && first.durationMilliseconds == 600)
        // Not confirmed yet: offered again, and then no more once it is.
        #expect(game.checkpoint(now: at)?.0 == first)
        game.checkpointSaved(size)
        #expect(game.checkpoint(now: at + 100 * Self.ms) == nil)
        // Moves: only those since the confirmed checkpoint go, after the count it holds.
        _ = try game.move(.left, seenStep: 1, now: at + 100 * Self.ms).get()
        let (one, oneSize) = try #require(game.checkpoint(now: at + 100 * Self.ms))
        game.checkpointSaved(oneSize)
        _ = try game.move(.right, seenStep: 1, now: at + 200 * Self.ms).get()
        let (delta, deltaSize) = try #require(game.checkpoint(now: at + 200 * Self.ms))
        #expect(one.moves.map(\.direction) == [.left] && delta.movesBefore == 1 && delta.moves.map(\.direction) == [.right])
        let (whole, _) = try #require(game.checkpoint(now: at + 200 * Self.ms, full: true))
        #expect(whole.movesBefore == 0 && whole.moves == game.game.log.moves && whole.steps == 1)
        game.checkpointSaved(deltaSize)
        #expect(game.checkpoint(now: at + 200 * Self.ms) == nil)
        // A pause changes no log: nothing to write however long it lasts.
        stepOnce(game)
        _ = try game.pause(now: Self.start + 1300 * Self.ms).get()
        let (paused, pausedSize) = try #require(game.checkpoint(now: Self.start + 1300 * Self.ms))
        #expect(paused.steps == 2 && paused.durationMilliseconds == 1300)
        game.checkpointSaved(pausedSize)
        #expect(game.checkpoint(now: Self.start + 60_000 * Self.ms) == nil)
        // An ended game is being saved whole: no checkpoint.
        _ = try game.resume(now: Self.start + 61_000 * Self.ms).get()
        stepOnce(game)
        _ = game.end(.abandoned, now: Self.start + 62_000 * Self.ms)
        #expect(game.checkpoint(now: Self.start + 62_000 * Self.ms) == nil)
        // But a compacting round covers it whole: the rows before it go, and its save may fail.
        let (over, _) = try #require(game.checkpoint(now: Self.start + 62_000 * Self.ms, full: true))
        #expect(over.movesBefore == 0 && over.steps == game.game.log.steps && over.moves == game.game.log.moves)
    }

    @Test func aResumedGamesStoredPlayTimeThatNoMicrosecondCountHoldsIsBoundedNotTrappedOn() throws {
        // A game another node left, whose checkpoints' duration the database gives back damaged.
        let rebuilt = try Game(resuming: InputLog(), seed: 11, level: .fast)
        let game = GameSession(id: 1, gameID: "g1", playerID: 42, resuming: rebuilt, practice: false, graceLimitMilliseconds: 150,
                               startedAt: Date(timeIntervalSince1970: 1_800_000_000), playedMilliseconds: Int.max,
                               now: Self.start, deadline: Self.start + 60_000 * Self.ms)
        _ = try game.resume(now: Self.start + 1000 * Self.ms).get()
        let (checkpoint, _) = try #require(game.checkpoint(now: Self.start + 2000 * Self.ms, full: true))
        // Bounded, with the second played here on top.
        #expect(checkpoint.durationMilliseconds == GameSession.maximumResumedMilliseconds + 1000)
        // What is stored is never more than the wall-clock span, whatever the checkpoints said.
        #expect(game.record(endedAt: game.startedAt.addingTimeInterval(5)).durationMilliseconds <= 5000)
    }
}

extension Result where Failure == ProtocolError {
    var failureCode: ProtocolError.Code? {
        if case .failure(let error) = self { error.code } else { nil }
    }
}
