import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Finished races (`races`, `race_entries`) on SQLite: a race and its entries in one IMMEDIATE
/// transaction, after checking each entry's game is stored, is the racer's and of the race's
/// level. Like its ``Database``, used from one thread at a time (the storage thread).
public struct SQLiteRaceRepository: RaceRepository {
    public let database: Database
    /// The connection's statement cache (``SQLiteExecutor``), shared with the other repositories.
    let statements: SQLiteExecutor

    public init(database: Database, statements: SQLiteExecutor? = nil) {
        self.database = database
        self.statements = statements ?? SQLiteExecutor(database: database)
    }

    @discardableResult
    public func record(_ race: NewRace) throws -> RaceRecord {
        try race.validate()
        let publicID: String = try database.transaction(.immediate) { db in
            for (index, entry) in race.entries.enumerated() {
                let games = try statements.prepare("""
                    SELECT player_id, level, EXISTS (SELECT 1 FROM race_entries WHERE game_id = ?1) FROM games WHERE public_id = ?1
                    """).query([entry.gameID]) { ($0.int64(at: 0), $0.string(at: 1), $0.bool(at: 2)) }
                guard let game = games.first, game.0 == entry.playerID, game.1 == race.level.rawValue else {
                    throw StoreError(.invalid, "must name a stored \(race.level.rawValue) game of player \(entry.playerID)",
                                     field: "entries[\(index)].gameID")
                }
                guard !game.2 else {
                    throw StoreError(.invalid, "names a game that is in another race already", field: "entries[\(index)].gameID")
                }
            }
            // 64 random bits: a clash is drawn again, without aborting the transaction.
            var raceID: Int64?
            var publicID = ""
            for _ in 1...5 where raceID == nil {
                publicID = RaceRecord.newPublicID()
                raceID = try statements.prepare("""
                    INSERT INTO races (public_id, room_code, level, practice, seed, started_at, ended_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (public_id) DO NOTHING RETURNING id
                    """).query([publicID, race.roomCode, race.level.rawValue, race.practice, Int64(bitPattern: race.seed),
                               UTCCivilTime.text(race.startedAt), UTCCivilTime.text(race.endedAt)]) { $0.int64(at: 0) }.first
            }
            guard let raceID else { throw StoreError.unreadable("five race ids in a row were taken") }
            let insert = try statements.prepare("""
                INSERT INTO race_entries (race_id, place, seat, player_id, game_id, score, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            for entry in race.entries {
                try insert.execute([raceID, entry.place, entry.seat, entry.playerID, entry.gameID, entry.score, entry.endReason.rawValue])
            }
            _ = db
            return publicID
        }
        guard let stored = try self.race(publicID: publicID) else {
            throw StoreError.unreadable("races lost the race \(publicID) just written")
        }
        return stored
    }

    public func race(publicID: String) throws -> RaceRecord? {
        try database.transaction(.deferred) { _ in
            let races = try statements.prepare("""
                SELECT id, public_id, room_code, level, practice, seed, started_at, ended_at FROM races WHERE public_id = ?
                """).query([publicID]) { row in
                    (row.int64(at: 0), row.string(at: 1), row.string(at: 2), row.string(at: 3), row.bool(at: 4),
                     UInt64(bitPattern: row.int64(at: 5)), row.string(at: 6), row.string(at: 7))
                }
            guard let race = races.first else { return nil }
            let entries = try statements.prepare("""
                SELECT e.place, e.seat, e.player_id, p.public_id, p.display_name, e.game_id, e.score, e.end_reason
                FROM race_entries e JOIN players p ON p.id = e.player_id
                WHERE e.race_id = ? ORDER BY e.place
                """).query([race.0]) { row -> RaceRecord.Entry in
                    guard let reason = RaceEndReason(rawValue: row.string(at: 7)) else {
                        throw StoreError.unreadable("race_entries of race \(publicID) holds an end this build cannot read")
                    }
                    return RaceRecord.Entry(place: row.int(at: 0), seat: row.int(at: 1), playerID: row.int64(at: 2),
                                            playerPublicID: row.string(at: 3), displayName: row.string(at: 4),
                                            gameID: row.string(at: 5), score: row.int(at: 6), endReason: reason)
                }
            guard let level = SpeedLevel(rawValue: race.3) else {
                throw StoreError.unreadable("races row \(publicID) holds a level this build cannot read")
            }
            return RaceRecord(publicID: race.1, roomCode: race.2, level: level, practice: race.4, seed: race.5,
                              startedAt: try UTCCivilTime.storedDate(race.6, column: "races.started_at"),
                              endedAt: try UTCCivilTime.storedDate(race.7, column: "races.ended_at"), entries: entries)
        }
    }

    public func raceIDs(forGames gameIDs: [String]) throws -> [String: String] {
        guard !gameIDs.isEmpty else { return [:] }
        let list = String(decoding: try JSONEncoder().encode(gameIDs), as: UTF8.self)
        let pairs = try statements.prepare("""
            SELECT e.game_id, r.public_id FROM json_each(?) AS j CROSS JOIN race_entries e CROSS JOIN races r
            WHERE e.game_id = j.value AND r.id = e.race_id
            """).query([list]) { ($0.string(at: 0), $0.string(at: 1)) }
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }
}
