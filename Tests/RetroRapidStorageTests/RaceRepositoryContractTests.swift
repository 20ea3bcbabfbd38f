import Foundation
import RetroRapidDomain
import RetroRapidRules
import RetroRapidStorageFixtures
import Testing

/// The contract of `RaceRepository`, run against every backend in `StorageBackends.all`.
@Suite struct RaceRepositoryContractTests {
    let start = utc("2026-12-01T10:00:00Z")

    /// Three racers' games stored, ids r1…r3.
    func racers(_ store: StoreUnderTest) throws -> [Int64] {
        let repositories = store.repositories()
        var players: [Int64] = []
        for (index, name) in ["Ann", "Bo", "Cy"].enumerated() {
            let player = try addRacer(repositories.players, name).id
            var game = scoredGame(player: player, score: 10 * (index + 1), endedAt: start.addingTimeInterval(60))
            game.publicID = "00000000000000r\(index + 1)"
            try repositories.games.record(game)
            players.append(player)
        }
        return players
    }

    @Test(arguments: StorageBackends.all) func aRaceIsStoredWithItsEntriesAndReadBack(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = try racers(store)
            let races = store.repositories().races
            let race = NewRace(roomCode: "K7QXM2", level: .fast, practice: false, seed: 0xF00D_0000_0000_BEEF, startedAt: start,
                               endedAt: start.addingTimeInterval(60), entries: [
                .init(place: 1, seat: 2, playerID: players[2], gameID: "00000000000000r3", score: 30, endReason: .crash),
                .init(place: 2, seat: 0, playerID: players[0], gameID: "00000000000000r1", score: 10, endReason: .timeLimit),
                .init(place: 3, seat: 1, playerID: players[1], gameID: "00000000000000r2", score: 20, endReason: .abandoned),
            ])
            let stored = try races.record(race)
            #expect(stored.publicID.count == 16 && stored.publicID.allSatisfy(\.isHexDigit))
            #expect(stored.roomCode == "K7QXM2" && stored.seed == 0xF00D_0000_0000_BEEF && stored.level == .fast && !stored.practice)
            #expect(stored.entries.map(\.displayName) == ["Racer Cy", "Racer Ann", "Racer Bo"])
            #expect(stored.entries.map(\.endReason) == [.crash, .timeLimit, .abandoned])
            #expect(stored.entries.map(\.seat) == [2, 0, 1])
            #expect(try races.race(publicID: stored.publicID) == stored)
            #expect(try races.race(publicID: "0000000000000000") == nil)
            #expect(try races.raceIDs(forGames: ["00000000000000r1", "00000000000000r3", "nope"])
                    == ["00000000000000r1": stored.publicID, "00000000000000r3": stored.publicID])
            // A rematch in the same room is another race.
            var rematch = race
            rematch.entries = [race.entries[0]]
            rematch.entries[0].place = 1
            #expect(throws: StoreError.self) { try races.record(rematch) }  // its game is in the first race already
        }
    }

    @Test(arguments: StorageBackends.all) func aBadRaceIsRefusedAndStoresNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = try racers(store)
            let races = store.repositories().races
            let good = NewRace.Entry(place: 1, seat: 0, playerID: players[0], gameID: "00000000000000r1", score: 10, endReason: .crash)
            func race(_ entries: [NewRace.Entry], level: SpeedLevel = .fast) -> NewRace {
                NewRace(roomCode: "K7QXM2", level: level, practice: true, seed: 1, startedAt: start, endedAt: start, entries: entries)
            }
            let before = try store.dump()
            var other = good
            other.place = 2
            other.seat = 1
            other.playerID = players[1]
            for (bad, field) in [
                (race([]), "entries"),
                (race([good], level: .rapid), "entries[0].gameID"),
                (race([good, { var e = other; e.gameID = "00000000000000r3"; return e }()]), "entries[1].gameID"),
                (race([good, { var e = other; e.gameID = "missing"; return e }()]), "entries[1].gameID"),
                (race([good, { var e = other; e.place = 1; e.gameID = "00000000000000r2"; return e }()]), "entries.place"),
                (race([good, { var e = other; e.seat = 0; e.gameID = "00000000000000r2"; return e }()]), "entries.seat"),
                (race([{ var e = good; e.seat = 8; return e }()]), "entries[0].seat"),
            ] {
                do {
                    try races.record(bad)
                    Issue.record("accepted a race with a bad \(field)")
                } catch let error as StoreError {
                    #expect(error.code == .invalid && error.field == field, "\(error)")
                }
            }
            #expect(try store.dump() == before)
        }
    }
}
