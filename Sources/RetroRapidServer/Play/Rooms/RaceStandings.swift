/// A race's standings: each racer's score, lane, step and state, placed by score, then steps,
/// then seat; and when to send them, at most once per `interval` while something changed, the
/// first and the last always. Pure: times are `MonotonicClock` microseconds from the caller.
///
/// Threading rule: owned by the race's `RoomHost` entry on the libwebsockets service thread.
struct RaceStandings {
    enum RacerState: String, Sendable {
        case racing, crashed, away, left, finished
        /// Still racing when the race's time limit came.
        case timeLimit = "time_limit"
    }

    struct Entry: Equatable, Sendable {
        let seat: Int
        let name: String
        let gameID: String
        var score: Int
        var lane: Int
        var step: Int
        var state: RacerState
        /// 1 for the leader; filled by `placed`.
        var place = 0
    }

    /// The least time between two sends, in microseconds.
    let interval: Int64
    /// By seat.
    private(set) var entries: [Entry]
    /// Something changed since the last send.
    private(set) var changed = true
    private(set) var lastSentAt: Int64?
    /// The last standings went out: nothing more is sent.
    private(set) var closed = false

    init(entries: [Entry], intervalMicroseconds: Int64) {
        self.entries = entries.sorted { $0.seat < $1.seat }
        interval = intervalMicroseconds
    }

    /// Sets a racer's figures; marks the standings changed when they differ.
    mutating func update(seat: Int, score: Int, lane: Int, step: Int, state: RacerState) {
        guard let index = entries.firstIndex(where: { $0.seat == seat }) else { return }
        let before = entries[index]
        entries[index].score = score
        entries[index].lane = lane
        entries[index].step = step
        entries[index].state = state
        if entries[index] != before { changed = true }
    }

    mutating func setState(seat: Int, _ state: RacerState) {
        guard let index = entries.firstIndex(where: { $0.seat == seat }), entries[index].state != state else { return }
        entries[index].state = state
        changed = true
    }

    func entry(seat: Int) -> Entry? { entries.first { $0.seat == seat } }

    /// The entries in place order, each with its place.
    var placed: [Entry] {
        let ordered = entries.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.step != b.step { return a.step > b.step }
            return a.seat < b.seat
        }
        return ordered.enumerated().map { index, entry in
            var entry = entry
            entry.place = index + 1
            return entry
        }
    }

    /// When standings next need sending, or nil when nothing waits (for the caller's timer).
    var dueAt: Int64? {
        guard changed, !closed else { return nil }
        guard let lastSentAt else { return .min }
        return lastSentAt + interval
    }

    /// The standings to send now, if any are due; the first call always sends.
    mutating func take(now: Int64) -> [Entry]? {
        guard let dueAt, dueAt <= now else { return nil }
        changed = false
        lastSentAt = now
        return placed
    }

    /// The race is over: the last standings, whenever the previous went out; none after.
    mutating func takeLast(now: Int64) -> [Entry] {
        changed = false
        lastSentAt = now
        closed = true
        return placed
    }
}
