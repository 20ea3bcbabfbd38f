import Testing
@testable import RetroRapidServer

@Suite("RaceStandings")
struct RaceStandingsTests {
    func standings(interval: Int64 = 500) -> RaceStandings {
        RaceStandings(entries: (0..<4).map {
            RaceStandings.Entry(seat: 3 - $0, name: "R\(3 - $0)", gameID: "g\(3 - $0)", score: 0, lane: 1, step: 0, state: .racing)
        }, intervalMicroseconds: interval)
    }

    @Test func placesGoByScoreThenStepsThenSeat() {
        var standings = standings()
        standings.update(seat: 0, score: 5, lane: 0, step: 10, state: .crashed)
        standings.update(seat: 1, score: 7, lane: 2, step: 9, state: .racing)
        standings.update(seat: 2, score: 5, lane: 1, step: 12, state: .racing)
        standings.update(seat: 3, score: 5, lane: 1, step: 10, state: .away)
        let placed = standings.placed
        #expect(placed.map(\.seat) == [1, 2, 0, 3])
        #expect(placed.map(\.place) == [1, 2, 3, 4])
        #expect(standings.entries.map(\.seat) == [0, 1, 2, 3])
    }

    @Test func theFirstIsSentAtOnceThenAtMostOncePerIntervalAndOnlyWhenChanged() {
        var standings = standings(interval: 500)
        #expect(standings.take(now: 1000)?.count == 4)  // the first, always
        #expect(standings.take(now: 1001) == nil)  // nothing changed
        standings.update(seat: 1, score: 1, lane: 1, step: 1, state: .racing)
        #expect(standings.dueAt == 1500)
        #expect(standings.take(now: 1499) == nil)
        standings.update(seat: 2, score: 1, lane: 1, step: 1, state: .racing)
        #expect(standings.take(now: 1500)?.first?.seat == 1)
        #expect(standings.dueAt == nil)
        standings.update(seat: 2, score: 1, lane: 1, step: 1, state: .racing)  // the same figures
        #expect(standings.dueAt == nil)
        standings.setState(seat: 2, .away)
        #expect(standings.take(now: 1600) == nil && standings.take(now: 2000)?.first { $0.seat == 2 }?.state == .away)
    }

    @Test func theLastIsSentAtOnceAndNothingAfter() {
        var standings = standings(interval: 500)
        _ = standings.take(now: 0)
        standings.update(seat: 3, score: 9, lane: 0, step: 20, state: .crashed)
        let last = standings.takeLast(now: 10)
        #expect(last.first?.seat == 3 && last.first?.state == .crashed)
        standings.setState(seat: 0, .timeLimit)
        #expect(standings.dueAt == nil && standings.take(now: 10_000) == nil)
        #expect(RaceStandings.RacerState.timeLimit.rawValue == "time_limit")
    }
}
