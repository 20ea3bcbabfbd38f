import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// The daily free plays across two SQLite connections; the rest of the quota rules are in
/// Tests/RetroRapidStorageTests/QuotaRepositoryContractTests.swift.
@Suite struct SQLiteQuotaRepositoryTests {
    // Stays here: concurrency across two SQLite connections on one file.
    /// Two devices of one player, each with its own connection on its own thread, start a game
    /// at the same moment with one free play left: exactly one gets it, every time.
    @Test func twoDevicesRacingForTheLastPlayExactlyOneWins() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "quota.sqlite")
            let quota = SQLiteQuotaRepository(database: db)
            let now = utc("2026-01-15T18:00:00Z")

            for round in 1...40 {
                let player = try insertPlayer(db, "racer\(round)")
                for _ in 1...4 { try quota.consumePlay(playerID: player, now: now) }

                let outcomes = onThreadsAtOnce(2, path: db.path) { index, connection, record in
                    let device = index + 1
                    do {
                        let status = try SQLiteQuotaRepository(database: connection)
                            .consumePlay(playerID: player, gameID: "game-\(round)-\(device)", now: now)
                        record(status.playsLeft == 0 ? "won" : "won with \(status.playsLeft) left")
                    } catch let error as QuotaExhaustedError {
                        record(error.status.playsLeft == 0 ? "refused" : "refused with \(error.status.playsLeft) left")
                    } catch {
                        record("failed: \(error)")
                    }
                }

                #expect(outcomes.sorted() == ["refused", "won"], "round \(round)")
                #expect(try db.scalar("SELECT count(*) FROM plays WHERE player_id = ?", [player]) == .integer(5), "round \(round)")
            }
        }
    }
}
