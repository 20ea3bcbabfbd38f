import RetroRapidRules
import Testing
@testable import RetroRapidServer

/// How the engine's events become messages (docs/PROTOCOL.md): one `step` per step with its
/// cue and haptic folded in, the crash with the final score, haptics on their messages.
@Suite("GameSession events to messages")
struct GameEventMessagesTests {
    let frame = StepFrame(step: 90, road: Road(), lane: .middle, score: 90, stepInterval: 600)

    func messages(_ events: [GameEvent]) -> GameEventMessages {
        var sink = GameEventMessages()
        for event in events { sink.receive(event) }
        return sink
    }

    @Test func aStepIsOneMessageWithItsCueAndHapticThenItsSpeedNews() {
        let sink = messages([.frame(frame), .speedUpSoon(atScore: 100), .cue(safeLanes: [.left, .right]), .haptic(.step)])
        #expect(sink.messages == [.step(frame, safeLanes: [.left, .right], haptic: true), .speedUpSoon(atScore: 100)])
        #expect(!sink.gameEnded)
        let faster = messages([.frame(frame), .speedUp(stepInterval: 540, stage: 1), .cue(safeLanes: .all), .haptic(.step)])
        #expect(faster.messages == [.step(frame, safeLanes: .all, haptic: true), .speedUp(interval: 540, stage: 1)])
    }

    // The host hands each step the last step's array (MatchHost.stepBuffer): its messages
    // must be gone, whatever it held and whoever else still holds it.
    @Test func aReusedArrayStartsEmptyAndLeavesItsOtherHoldersTheirMessages() {
        let earlier: [ServerMessage] = [.step(frame, safeLanes: .all, haptic: true), .bump(.left)]
        var sink = GameEventMessages(reusing: earlier)
        #expect(sink.messages.isEmpty)
        sink.receive(.frame(frame))
        #expect(sink.messages == [.step(frame, safeLanes: .none, haptic: false)])
        #expect(earlier == [.step(frame, safeLanes: .all, haptic: true), .bump(.left)])
        var unique: [ServerMessage] = [.bump(.right)]
        unique.reserveCapacity(8)
        let alone = GameEventMessages(reusing: unique)
        #expect(alone.messages.isEmpty && alone.messages.capacity >= 8)
    }

    @Test func aCrashFromAheadIsTheStepThenOneCrashMessageWithTheFinalScore() {
        let sink = messages([.frame(frame), .crash(.ahead, lane: .middle), .haptic(.crash), .gameOver(score: 90, steps: 90)])
        #expect(sink.messages == [.step(frame, safeLanes: .none, haptic: false),
                                  .crash(kind: .ahead, lane: .middle, step: 90, score: 90)])
        #expect(sink.gameEnded)
    }

    @Test func movesBumpsAndSideCrashes() {
        #expect(messages([.moved(to: .left, safe: true), .haptic(.move)]).messages == [.moved(lane: .left, safe: true, haptic: true)])
        #expect(messages([.bump(.right), .haptic(.bump)]).messages == [.bump(.right)])
        let side = messages([.moved(to: .right, safe: false), .crash(.side, lane: .right), .haptic(.crash),
                             .gameOver(score: 12, steps: 30)])
        #expect(side.messages == [.moved(lane: .right, safe: false, haptic: false),
                                  .crash(kind: .side, lane: .right, step: 30, score: 12)])
    }

    @Test func aGracedMoveRevisesTheStepAndCanLeaveOutStepRevised() {
        var sink = messages([.stepRevised(step: 90), .moved(to: .left, safe: true), .haptic(.move),
                             .frame(frame), .cue(safeLanes: [.left]), .haptic(.step)])
        #expect(sink.messages.first == .stepRevised(step: 90))
        sink.dropStepRevised()  // for a step the client never saw (its crash was held)
        #expect(sink.messages == [.moved(lane: .left, safe: true, haptic: true), .step(frame, safeLanes: [.left], haptic: true)])
    }

    @Test func pauseIsAMessageAndResumeIsTheSessions() {
        #expect(messages([.paused]).messages == [.paused(reason: .player)])
        #expect(messages([.resumed]).messages.isEmpty)  // the session says when the next step comes
    }
}
