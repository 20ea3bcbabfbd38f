import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Finished races (`races`, `race_entries`) on PostgreSQL: the rules of `SQLiteRaceRepository`.
/// A race and its entries are one transaction; the games they name are checked in it (and by
/// the foreign key), and a public id that clashes is drawn again with `ON CONFLICT DO NOTHING`,
/// without aborting the transaction. Used from one thread at a time (a storage thread).
public struct PostgresRaceRepository: RaceRepository {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    @discardableResult
    public func record(_ race: NewRace) throws -> RaceRecord {
        try race.validate()
        let publicID: String = try connection.transaction { db in
            for (index, entry) in race.entries.enumerated() {
                // A game is in one race: checked here, and race_entries.game_id UNIQUE backs it
                // against two races recorded at once.
                let game = try db.execute("""
                    SELECT player_id, level, EXISTS (SELECT 1 FROM race_entries WHERE game_id = $1) FROM games WHERE public_id = $1
                    """, [entry.gameID]).first
                guard let game, game.int64(at: 0) == entry.playerID, game.string(at: 1) == race.level.rawValue else {
                    throw StoreError(.invalid, "must name a stored \(race.level.rawValue) game of player \(entry.playerID)",
                                     field: "entries[\(index)].gameID")
                }
                guard !game.bool(at: 2) else {
                    throw StoreError(.invalid, "names a game that is in another race already", field: "entries[\(index)].gameID")
                }
            }
            var raceID: Int64?
            var publicID = ""
            for _ in 1...5 where raceID == nil {
                publicID = RaceRecord.newPublicID()
                raceID = try db.execute("""
                    INSERT INTO races (public_id, room_code, level, practice, seed, started_at, ended_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (public_id) DO NOTHING RETURNING id
                    """, [publicID, race.roomCode, race.level.rawValue, race.practice, Int64(bitPattern: race.seed),
                          UTCCivilTime.text(race.startedAt), UTCCivilTime.text(race.endedAt)]).first?.int64(at: 0)
            }
            guard let raceID else { throw StoreError.unreadable("five race ids in a row were taken") }
            for entry in race.entries {
                try db.execute("""
                    INSERT INTO race_entries (race_id, place, seat, player_id, game_id, score, end_reason) VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """, [raceID, entry.place, entry.seat, entry.playerID, entry.gameID, entry.score, entry.endReason.rawValue])
            }
            return publicID
        }
        guard let stored = try self.race(publicID: publicID) else {
            throw StoreError.unreadable("races lost the race \(publicID) just written")
        }
        return stored
    }

    public func race(publicID: String) throws -> RaceRecord? {
        try connection.transaction(.repeatableRead) { db in
            guard let race = try db.execute("""
                SELECT id, public_id, room_code, level, practice, seed, started_at, ended_at FROM races WHERE public_id = $1
                """, [publicID]).first else { return nil }
            var entries: [RaceRecord.Entry] = []
            for row in try db.execute("""
                SELECT e.place, e.seat, e.player_id, p.public_id, p.display_name, e.game_id, e.score, e.end_reason
                FROM race_entries e JOIN players p ON p.id = e.player_id
                WHERE e.race_id = $1 ORDER BY e.place
                """, [race.int64(at: 0)]).map({ $0 }) {
                guard let reason = RaceEndReason(rawValue: row.string(at: 7)) else {
                    throw StoreError.unreadable("race_entries of race \(publicID) holds an end this build cannot read")
                }
                entries.append(RaceRecord.Entry(place: row.int(at: 0), seat: row.int(at: 1), playerID: row.int64(at: 2),
                                                playerPublicID: row.string(at: 3), displayName: row.string(at: 4),
                                                gameID: row.string(at: 5), score: row.int(at: 6), endReason: reason))
            }
            guard let level = SpeedLevel(rawValue: race.string(at: 3)) else {
                throw StoreError.unreadable("races row \(publicID) holds a level this build cannot read")
            }
            return RaceRecord(publicID: race.string(at: 1), roomCode: race.string(at: 2), level: level, practice: race.bool(at: 4),
                              seed: UInt64(bitPattern: race.int64(at: 5)),
                              startedAt: try UTCCivilTime.storedDate(race.string(at: 6), column: "races.started_at"),
                              endedAt: try UTCCivilTime.storedDate(race.string(at: 7), column: "races.ended_at"), entries: entries)
        }
    }

    public func raceIDs(forGames gameIDs: [String]) throws -> [String: String] {
        guard !gameIDs.isEmpty else { return [:] }
        var ids: [String: String] = [:]
        for row in try connection.execute("""
            SELECT e.game_id, r.public_id FROM race_entries e JOIN races r ON r.id = e.race_id WHERE e.game_id = ANY ($1::text[])
            """, [PostgresRunningGameRepository.arrayLiteral(gameIDs)]).map({ $0 }) {
            ids[row.string(at: 0)] = row.string(at: 1)
        }
        return ids
    }
}
