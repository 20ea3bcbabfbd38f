import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// Settings versions against a real server, with writers on connections of their own (two
/// devices of one player served by two nodes): of writes based on one version exactly one is
/// stored, the others are answered stale with it.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresSettingsRaceTests {
    let now = utc("2026-01-15T10:23:45Z")

    /// A document told apart by its cue volume.
    static func document(volume: Int) -> PlayerSettings {
        var settings = PlayerSettings()
        settings.cueVolume = volume
        return settings
    }

    @Test func ofTwoWritesBasedOnOneVersionExactlyOneWinsRoundAfterRound() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            let now = now
            // Round 0 races for the first row (version 0, an INSERT); later rounds for an UPDATE.
            for round in 0..<20 {
                let results = raceOnConnections(2, url: url) { index, racer in
                    try SQLSettingsRepository(executor: racer)
                        .write(playerID: player, document: Self.document(volume: index == 0 ? round : 50 + round), basedOnVersion: round, now: now)
                }
                let outcomes = try results.map { try $0.get() }
                let written = outcomes.compactMap { outcome -> VersionedSettings? in
                    if case .written(let stored) = outcome { return stored }
                    return nil
                }
                #expect(written.count == 1, "round \(round): \(outcomes)")
                guard let winner = written.first else { return }
                #expect(winner.version == round + 1)
                // The loser is shown what the winner stored.
                #expect(outcomes.contains(.stale(current: winner)), "round \(round): \(outcomes)")
                #expect(try SQLSettingsRepository(executor: connection).settings(playerID: player) == winner)
            }
            #expect(try connection.execute("SELECT version FROM player_settings").map { $0.int(at: 0) } == [20])
        }
    }

    @Test func ofManyPatchesBasedOnOneVersionExactlyOneIsStored() throws {
        try withRaceDatabase { url, connection in
            let player = try addRacer(SQLPlayerRepository(executor: connection), "Ada").id
            _ = try SQLSettingsRepository(executor: connection).write(playerID: player, document: Self.document(volume: 1), basedOnVersion: 0, now: now)
            let now = now
            let results = raceOnConnections(30, url: url) { index, racer in
                try SQLSettingsRepository(executor: racer)
                    .patch(playerID: player, json: Data(#"{"effectsVolume":\#(index)}"#.utf8), basedOnVersion: 1, now: now)
            }
            let outcomes = try results.map { try $0.get() }
            let written = outcomes.compactMap { outcome -> VersionedSettings? in
                if case .written(let stored) = outcome { return stored }
                return nil
            }
            #expect(written.count == 1)
            guard let winner = written.first else { return }
            #expect(winner.version == 2 && winner.settings.cueVolume == 1)
            #expect(outcomes.filter { $0 == .stale(current: winner) }.count == 29)
            #expect(try SQLSettingsRepository(executor: connection).settings(playerID: player) == winner)
        }
    }
}
