import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// The daily free plays, against a real database file migrated with the real `Migrations/`.
@Suite struct SQLiteQuotaRepositoryTests {
    @Test func playsCountDownAndResetAtUTCMidnight() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "quota.sqlite")
            let player = try insertPlayer(db, "p1")
            let quota = SQLiteQuotaRepository(database: db)

            let fresh = try quota.status(playerID: player, now: utc("2026-01-15T10:00:00Z"))
            #expect(fresh.day == "2026-01-15")
            #expect(fresh.playsUsed == 0 && fresh.playsLeft == 5 && fresh.dailyFreePlays == 5)
            #expect(!fresh.unlimited && fresh.canPlay)
            #expect(fresh.resetsAt == utc("2026-01-16T00:00:00Z"))

            let times = ["2026-01-15T00:00:00Z", "2026-01-15T08:00:00Z", "2026-01-15T12:30:00Z", "2026-01-15T20:00:00Z", "2026-01-15T23:59:59Z"]
            for (index, time) in times.enumerated() {
                let status = try quota.consumePlay(playerID: player, now: utc(time))
                #expect(status.playsUsed == index + 1)
                #expect(status.playsLeft == 4 - index)
                #expect(status.resetsAt == utc("2026-01-16T00:00:00Z"))
            }
            let spent = try quota.status(playerID: player, now: utc("2026-01-15T23:59:59Z"))
            #expect(spent.playsLeft == 0 && !spent.canPlay)

            // The first second of the next UTC day: a full quota again.
            let midnight = utc("2026-01-16T00:00:00Z")
            let reset = try quota.status(playerID: player, now: midnight)
            #expect(reset.day == "2026-01-16" && reset.playsUsed == 0 && reset.playsLeft == 5)
            #expect(reset.resetsAt == utc("2026-01-17T00:00:00Z"))
            #expect(try quota.consumePlay(playerID: player, now: midnight).playsLeft == 4)
            #expect(try db.scalar("SELECT count(*) FROM plays WHERE player_id = ?", [player]) == .integer(6))
        }
    }

    @Test func theDailyAllowanceIsConfigurable() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "quota.sqlite")
            let player = try insertPlayer(db, "p1")
            let now = utc("2026-01-15T09:00:00Z")

            let two = SQLiteQuotaRepository(database: db, dailyFreePlays: 2)
            #expect(try two.consumePlay(playerID: player, now: now).playsLeft == 1)
            #expect(try two.consumePlay(playerID: player, now: now).playsLeft == 0)
            #expect(throws: QuotaExhaustedError.self) { try two.consumePlay(playerID: player, now: now) }

            let other = try insertPlayer(db, "p2")
            let none = SQLiteQuotaRepository(database: db, dailyFreePlays: 0)
            #expect(try none.status(playerID: other, now: now).canPlay == false)
            #expect(throws: QuotaExhaustedError.self) { try none.consumePlay(playerID: other, now: now) }
            #expect(try db.scalar("SELECT count(*) FROM plays WHERE player_id = ?", [other]) == .integer(0))
        }
    }

    @Test func unlimitedPlayersConsumeNothing() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "quota.sqlite")
            let player = try insertPlayer(db, "p1")
            let quota = SQLiteQuotaRepository(database: db)
            let now = utc("2026-01-15T09:00:00Z")
            for _ in 1...5 { try quota.consumePlay(playerID: player, now: now) }
            #expect(throws: QuotaExhaustedError.self) { try quota.consumePlay(playerID: player, now: now) }

            try SQLiteEntitlementRepository(database: db).grantUnlimited(playerID: player, source: .operator, reference: "tester", now: now)
            for _ in 1...20 {
                let status = try quota.consumePlay(playerID: player, now: now)
                #expect(status.unlimited && status.canPlay)
                #expect(status.playsUsed == 5)
            }
            #expect(try db.scalar("SELECT count(*) FROM plays") == .integer(5))
            #expect(try quota.status(playerID: player, now: now).unlimited)
        }
    }

    @Test func aResumedGameConsumesNoSecondPlayEvenAfterMidnight() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder, named: "quota.sqlite")
            let player = try insertPlayer(db, "p1")
            let quota = SQLiteQuotaRepository(database: db)
            #expect(try quota.consumePlay(playerID: player, gameID: "g1", now: utc("2026-01-15T23:59:00Z")).playsUsed == 1)
            #expect(try quota.consumePlay(playerID: player, gameID: "g1", now: utc("2026-01-15T23:59:30Z")).playsUsed == 1)
            #expect(try quota.consumePlay(playerID: player, gameID: "g1", now: utc("2026-01-16T00:00:10Z")).playsUsed == 0)
            #expect(try quota.consumePlay(playerID: player, gameID: "g2", now: utc("2026-01-16T00:00:20Z")).playsUsed == 1)
            #expect(try db.scalar("SELECT count(*) FROM plays") == .integer(2))
        }
    }

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
