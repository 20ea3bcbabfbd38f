import Foundation
import RetroRapidDomain
import RetroRapidRules

/// Finished races (`races`, `race_entries`), on either backend. A race and its entries are one
/// transaction; the games they name are checked in it (each stored, the racer's, of the race's
/// level, in no other race: `race_entries.game_id UNIQUE` backs that against two races recorded
/// at once), and a public id that clashes is drawn again with `ON CONFLICT DO NOTHING`, without
/// aborting the transaction.
public struct SQLRaceRepository: RaceRepository {
    public let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    @discardableResult
    public func record(_ race: NewRace) throws -> RaceRecord {
        try race.validate()
        let publicID: String = try executor.writeTransaction {
            for (index, entry) in race.entries.enumerated() {
                let game = try executor.query("""
                    SELECT player_id, level, EXISTS (SELECT 1 FROM race_entries WHERE game_id = $1) AS raced
                    FROM games WHERE public_id = $1
                    """, [entry.gameID]).first
                guard let game, try game.int64("player_id") == entry.playerID, try game.string("level") == race.level.rawValue else {
                    throw StoreError(.invalid, "must name a stored \(race.level.rawValue) game of player \(entry.playerID)",
                                     field: "entries[\(index)].gameID")
                }
                guard try !game.bool("raced") else {
                    throw StoreError(.invalid, "names a game that is in another race already", field: "entries[\(index)].gameID")
                }
            }
            // 64 random bits: a clash is drawn again, without aborting the transaction.
            var raceID: Int64?
            var publicID = ""
            for _ in 1...5 where raceID == nil {
                publicID = RaceRecord.newPublicID()
                raceID = try executor.query("""
                    INSERT INTO races (public_id, room_code, level, practice, seed, started_at, ended_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (public_id) DO NOTHING RETURNING id
                    """, [publicID, race.roomCode, race.level.rawValue, race.practice, Int64(bitPattern: race.seed),
                          UTCCivilTime.text(race.startedAt), UTCCivilTime.text(race.endedAt)]).first?.int64("id")
            }
            guard let raceID else { throw StoreError.unreadable("five race ids in a row were taken") }
            for entry in race.entries {
                try executor.query("""
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
        try executor.readTransaction {
            guard let race = try executor.query("""
                SELECT id, public_id, room_code, level, practice, seed, started_at, ended_at FROM races WHERE public_id = $1
                """, [publicID]).first else { return nil }
            let entries = try executor.query("""
                SELECT e.place AS place, e.seat AS seat, e.player_id AS player_id, p.public_id AS public_id,
                       p.display_name AS display_name, e.game_id AS game_id, e.score AS score, e.end_reason AS end_reason
                FROM race_entries e JOIN players p ON p.id = e.player_id
                WHERE e.race_id = $1 ORDER BY e.place
                """, [race.int64("id")]).rows.map { row -> RaceRecord.Entry in
                    guard let reason = RaceEndReason(rawValue: try row.string("end_reason")) else {
                        throw StoreError.unreadable("race_entries of race \(publicID) holds an end this build cannot read")
                    }
                    return RaceRecord.Entry(place: try row.int("place"), seat: try row.int("seat"), playerID: try row.int64("player_id"),
                                            playerPublicID: try row.string("public_id"), displayName: try row.string("display_name"),
                                            gameID: try row.string("game_id"), score: try row.int("score"), endReason: reason)
                }
            guard let level = SpeedLevel(rawValue: try race.string("level")) else {
                throw StoreError.unreadable("races row \(publicID) holds a level this build cannot read")
            }
            return RaceRecord(publicID: try race.string("public_id"), roomCode: try race.string("room_code"), level: level,
                              practice: try race.bool("practice"), seed: UInt64(bitPattern: try race.int64("seed")),
                              startedAt: try UTCCivilTime.storedDate(race.string("started_at"), column: "races.started_at"),
                              endedAt: try UTCCivilTime.storedDate(race.string("ended_at"), column: "races.ended_at"), entries: entries)
        }
    }

    public func raceIDs(forGames gameIDs: [String]) throws -> [String: String] {
        guard !gameIDs.isEmpty else { return [:] }
        let rows = try executor.query("""
            SELECT e.game_id AS game_id, r.public_id AS public_id FROM race_entries e JOIN races r ON r.id = e.race_id
            WHERE \(executor.dialect.isOneOf("e.game_id", textListAt: "$1"))
            """, [executor.dialect.textList(gameIDs)]).rows
        var ids: [String: String] = [:]
        for row in rows { ids[try row.string("game_id")] = try row.string("public_id") }
        return ids
    }
}
