import RetroRapidRules

/// Players waiting for a quick race, per level, in arrival order. A level's waiting players
/// form a room when 2 or more wait and `wait` has passed since the second arrived, or at once
/// when 8 wait. Pure: times are `MonotonicClock` microseconds given by the caller.
///
/// Threading rule: owned by the `RoomHost` on the libwebsockets service thread.
struct QuickRaceQueue {
    struct Waiting: Equatable, Sendable {
        let playerID: Int64
        let name: String
    }

    /// A room's worth of players taken from the queue.
    struct Formed: Equatable, Sendable {
        let level: SpeedLevel
        let players: [Waiting]
    }

    static let roomSize = RaceRoom.seatRange.upperBound

    /// How long the queue waits after its second arrival, in microseconds.
    let wait: Int64
    private var waiting: [SpeedLevel: [Waiting]] = [:]
    /// When each level's current wait began (2 or more waiting); nil with fewer.
    private var waitStartedAt: [SpeedLevel: Int64] = [:]

    init(waitMicroseconds: Int64) { wait = waitMicroseconds }

    func level(of playerID: Int64) -> SpeedLevel? {
        waiting.first { $0.value.contains { $0.playerID == playerID } }?.key
    }

    func players(at level: SpeedLevel) -> [Waiting] { waiting[level] ?? [] }

    /// When the level's next room forms, or nil while fewer than 2 wait.
    func startsAt(_ level: SpeedLevel) -> Int64? { waitStartedAt[level].map { $0 + wait } }

    /// The earliest `startsAt` of every level, for the caller's timer.
    var nextDeadline: Int64? { waitStartedAt.values.min().map { $0 + wait } }

    /// Adds the player; when that makes 8, their room forms at once and is returned.
    mutating func join(playerID: Int64, name: String, level: SpeedLevel, now: Int64) throws(RoomRefusal) -> Formed? {
        guard self.level(of: playerID) == nil else { throw .alreadyInQueue }
        waiting[level, default: []].append(Waiting(playerID: playerID, name: name))
        if waiting[level]!.count == 2 { waitStartedAt[level] = now }
        if waiting[level]!.count >= Self.roomSize { return form(level, now: now) }
        return nil
    }

    /// Takes the player out; returns the level they waited at.
    @discardableResult
    mutating func leave(playerID: Int64) throws(RoomRefusal) -> SpeedLevel {
        guard let level = level(of: playerID) else { throw .notInQueue }
        waiting[level]!.removeAll { $0.playerID == playerID }
        if waiting[level]!.count < 2 { waitStartedAt[level] = nil }
        if waiting[level]!.isEmpty { waiting[level] = nil }
        return level
    }

    /// Every room due by `now`: each level whose wait has ended gives its first (up to 8).
    mutating func due(now: Int64) -> [Formed] {
        var formed: [Formed] = []
        for level in SpeedLevel.allCases {
            if let startsAt = startsAt(level), startsAt <= now { formed.append(form(level, now: now)) }
        }
        return formed
    }

    /// The first (up to 8) players at the level; those left behind, if 2 or more, start a
    /// full wait of their own now.
    private mutating func form(_ level: SpeedLevel, now: Int64) -> Formed {
        let all = waiting[level] ?? []
        let taken = Array(all.prefix(Self.roomSize))
        let rest = Array(all.dropFirst(Self.roomSize))
        waiting[level] = rest.isEmpty ? nil : rest
        waitStartedAt[level] = rest.count >= 2 ? now : nil
        return Formed(level: level, players: taken)
    }
}
