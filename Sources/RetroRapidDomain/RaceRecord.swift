import Foundation
import RetroRapidRules

/// How a racer's part in a race ended (`race_entries.end_reason`): their game's end, or
/// `time_limit` for a racer still racing when the race's time ran out (their game is stored
/// `abandoned` with its score: `games.end_reason` has no such value).
public enum RaceEndReason: String, CaseIterable, Sendable, Codable {
    case crash
    case abandoned
    case shutdown
    case serverCrash = "server_crash"
    case timeLimit = "time_limit"
}

/// A finished race as the room hands it to ``RaceRepository/record(_:)``: every racer's game
/// must be stored already (a race entry names a game).
public struct NewRace: Sendable, Equatable {
    /// The room's invite code (a quick race's room too).
    public var roomCode: String
    public var level: SpeedLevel
    public var practice: Bool
    public var seed: UInt64
    public var startedAt: Date
    public var endedAt: Date
    /// In finish order: places 1, 2, 3… each once.
    public var entries: [Entry]

    public struct Entry: Sendable, Equatable {
        public var place: Int
        /// The racer's seat in the room, 0–7.
        public var seat: Int
        public var playerID: Int64
        /// The racer's game (`games.public_id`), of this player and this level.
        public var gameID: String
        public var score: Int
        public var endReason: RaceEndReason

        public init(place: Int, seat: Int, playerID: Int64, gameID: String, score: Int, endReason: RaceEndReason) {
            self.place = place
            self.seat = seat
            self.playerID = playerID
            self.gameID = gameID
            self.score = score
            self.endReason = endReason
        }
    }

    public init(roomCode: String, level: SpeedLevel, practice: Bool, seed: UInt64, startedAt: Date, endedAt: Date, entries: [Entry]) {
        self.roomCode = roomCode
        self.level = level
        self.practice = practice
        self.seed = seed
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.entries = entries
    }

    /// The most racers a room seats.
    public static let maximumSeats = 8

    /// The refusals of ``RaceRepository/record(_:)`` about the race itself, the same in every
    /// backend (the games are checked against the store by the backend).
    package func validate() throws(StoreError) {
        guard !roomCode.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "roomCode") }
        guard (1...Self.maximumSeats).contains(entries.count) else {
            throw StoreError(.invalid, "a race has 1 to \(Self.maximumSeats) entries, got \(entries.count)", field: "entries")
        }
        guard UTCCivilTime.seconds(endedAt) >= UTCCivilTime.seconds(startedAt) else {
            throw StoreError(.invalid, "must not be before startedAt", field: "endedAt")
        }
        guard entries.map(\.place).sorted() == Array(1...entries.count) else {
            throw StoreError(.invalid, "places must be 1 to \(entries.count), each once", field: "entries.place")
        }
        for (index, entry) in entries.enumerated() {
            guard (0..<Self.maximumSeats).contains(entry.seat) else {
                throw StoreError(.invalid, "must be from 0 to \(Self.maximumSeats - 1), got \(entry.seat)", field: "entries[\(index)].seat")
            }
            guard entry.score >= 0 else { throw StoreError(.invalid, "must not be negative", field: "entries[\(index)].score") }
            guard !entry.gameID.isEmpty else { throw StoreError(.invalid, "must not be empty", field: "entries[\(index)].gameID") }
        }
        guard Set(entries.map(\.seat)).count == entries.count else {
            throw StoreError(.invalid, "two entries have one seat", field: "entries.seat")
        }
        guard Set(entries.map(\.gameID)).count == entries.count, Set(entries.map(\.playerID)).count == entries.count else {
            throw StoreError(.invalid, "each racer and each game is in a race once", field: "entries.gameID")
        }
    }
}

/// A stored race (`races` and its `race_entries`).
public struct RaceRecord: Sendable, Equatable {
    /// Its public id (`raceId`): 16 hex digits.
    public var publicID: String
    public var roomCode: String
    public var level: SpeedLevel
    public var practice: Bool
    public var seed: UInt64
    public var startedAt: Date
    public var endedAt: Date
    /// In finish order. A racer whose player was deleted is gone from it.
    public var entries: [Entry]

    public struct Entry: Sendable, Equatable {
        public var place: Int
        public var seat: Int
        public var playerID: Int64
        public var playerPublicID: String
        public var displayName: String
        public var gameID: String
        public var score: Int
        public var endReason: RaceEndReason

        public init(place: Int, seat: Int, playerID: Int64, playerPublicID: String, displayName: String, gameID: String,
                    score: Int, endReason: RaceEndReason) {
            self.place = place
            self.seat = seat
            self.playerID = playerID
            self.playerPublicID = playerPublicID
            self.displayName = displayName
            self.gameID = gameID
            self.score = score
            self.endReason = endReason
        }
    }

    public init(publicID: String, roomCode: String, level: SpeedLevel, practice: Bool, seed: UInt64, startedAt: Date,
                endedAt: Date, entries: [Entry]) {
        self.publicID = publicID
        self.roomCode = roomCode
        self.level = level
        self.practice = practice
        self.seed = seed
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.entries = entries
    }

    /// 64 random bits as 16 lowercase hex digits, like a game id.
    package static func newPublicID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value: UInt64 = generator.next()
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
