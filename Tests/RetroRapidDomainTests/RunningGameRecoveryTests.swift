import Foundation
import RetroRapidDomain
import RetroRapidRules
import Testing

/// `RunningGameRecovery`'s refund rule, the one both backends apply: a game the server lost
/// gives its free play back only while the player's refunds of that day are under the cap.
@Suite struct RunningGameRecoveryTests {
    let start = Date(timeIntervalSince1970: 1_768_471_200)  // 2026-01-15T10:00:00Z

    func recovery(freePlay: Bool = true, startedAt: Date? = nil) -> RunningGameRecovery {
        let at = startedAt ?? start
        return RunningGameRecovery(RunningGameRecord(
            publicID: "00000000000000aa", playerID: 1, level: .fast, seed: 7, rulesVersion: GameRules.version, practice: false,
            freePlay: freePlay, startedAt: at, inputLog: "3:", durationMilliseconds: 2000, checkpointedAt: at.addingTimeInterval(3)),
            problem: nil)
    }

    @Test func theFirstRefundOfTheDayIsGivenAndNoMore() throws {
        #expect(RunningGameRecovery.refundsPerPlayerPerDay == 1)
        #expect(try recovery().givesBackPlay(refundedThatDay: 0))
        #expect(try !recovery().givesBackPlay(refundedThatDay: 1))
        #expect(try !recovery().givesBackPlay(refundedThatDay: 40))
    }

    @Test func aGameThatTookNoPlayGivesNoneBack() throws {
        #expect(try !recovery(freePlay: false).givesBackPlay(refundedThatDay: 0))
    }

    @Test func theDayIsTheOneTheGameStartedOn() {
        let late = Date(timeIntervalSince1970: 1_768_521_570)  // 2026-01-15T23:59:30Z
        #expect(recovery(startedAt: late).playDay.text == "2026-01-15")
    }

    @Test func aNegativeCountIsRefusedNotCompared() {
        #expect(throws: StoreError.self) { try recovery().givesBackPlay(refundedThatDay: -1) }
    }
}
