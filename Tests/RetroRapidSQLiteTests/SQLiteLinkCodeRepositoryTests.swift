import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Lets two threads start each round together, so their claims really overlap.
fileprivate final class RoundBarrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var round = 0

    init(parties: Int) { self.parties = parties }

    /// False when the other party did not arrive within `timeout` (it failed): give up.
    func wait(timeout: TimeInterval = 30) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let myRound = round
        arrived += 1
        if arrived == parties {
            arrived = 0
            round += 1
            condition.broadcast()
            return true
        }
        let deadline = Date().addingTimeInterval(timeout)
        while round == myRound {
            if !condition.wait(until: deadline) { return round != myRound }
        }
        return true
    }
}

@Suite struct SQLiteLinkCodeRepositoryTests {
    /// 2026-01-15T10:00:00Z: tests pass time in, so nothing depends on the clock.
    let t0 = Date(timeIntervalSince1970: 1_768_471_200)

    func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    /// A player with one signed-in device "Laptop", created at t0.
    func signedInPlayer(_ db: Database, name: String = "Ada") throws -> (device: AuthenticatedDevice, token: String) {
        let players = SQLPlayerRepository(executor: SQLiteExecutor(database: db))
        let (_, token) = try players.createPlayer(displayName: name, deviceLabel: "Laptop", now: t0)
        return (try players.authenticate(token: token, now: t0), token)
    }

    // Stays here: the claimed_by_device_id column, which the interface does not return.
    @Test func aClaimedCodeRecordsTheDeviceItMade() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let players = SQLPlayerRepository(executor: SQLiteExecutor(database: db))
            let codes = SQLLinkCodeRepository(executor: SQLiteExecutor(database: db))
            let issued = try codes.createCode(for: try signedInPlayer(db).device, now: at(0.5))
            let (_, token) = try codes.claim(code: issued.code, deviceLabel: "Phone", now: at(30))
            let phone = try players.authenticate(token: token, now: at(31))
            #expect(try db.column("SELECT claimed_by_device_id FROM link_codes") == [.integer(phone.deviceID)])
        }
    }

    // Stays here: what the code_hash column and the files on disk hold.
    @Test func onlyTheCodesHashIsStored() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let issued = try SQLLinkCodeRepository(executor: SQLiteExecutor(database: db)).createCode(for: try signedInPlayer(db).device, now: t0)
            let normalized = issued.code.replacingOccurrences(of: "-", with: "")
            #expect(try db.column("SELECT code_hash FROM link_codes") == [.blob(SHA256.hash(Array(normalized.utf8)))])

            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            let files = try bytesOfAllFiles(in: folder)
            let occurs = { (needle: [UInt8]) in bytes(files, contain: needle) }
            #expect(!occurs(Array(normalized.utf8)))
            #expect(!occurs(Array(issued.code.utf8)))
            #expect(occurs(SHA256.hash(Array(normalized.utf8))))  // the search finds what is there
        }
    }

    // Stays here: concurrency across two SQLite connections on one file.
    /// Two devices, on two connections to the same file on two threads, claim the same code at
    /// the same moment, round after round: each round exactly one gets a token.
    @Test func twoDevicesRacingForOneCodeExactlyOneWins() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let rounds = 60
            let codes = SQLLinkCodeRepository(executor: SQLiteExecutor(database: db), policy: .init(maximumPerWindow: rounds))
            let ada = try signedInPlayer(db)
            let issued = try (0..<rounds).map { _ in try codes.createCode(for: ada.device, now: t0).code }
            let path = db.path
            let claimTime = at(60)
            let adaID = ada.device.player.id

            let outcomes = Locked([[String]](repeating: [], count: rounds))
            let barrier = RoundBarrier(parties: 2)
            let finished = DispatchGroup()
            for side in 0..<2 {
                finished.enter()
                let thread = Thread {
                    defer { finished.leave() }
                    do {
                        let connection = try Database(path: path)
                        let claims = SQLLinkCodeRepository(executor: SQLiteExecutor(database: connection))
                        for round in 0..<rounds {
                            guard barrier.wait() else { return }
                            let outcome: String
                            do {
                                let (player, token) = try claims.claim(code: issued[round], deviceLabel: "Side \(side)", now: claimTime)
                                outcome = player.id == adaID && token.count == 43 ? "won" : "wrong player"
                            } catch let error as StoreError {
                                outcome = error.code.rawValue
                            } catch {
                                outcome = "database error: \(error)"
                            }
                            outcomes.withLock { $0[round].append(outcome) }
                        }
                    } catch {
                        outcomes.withLock { $0[0].append("cannot open: \(error)") }
                    }
                }
                thread.start()
            }
            finished.wait()

            let results = outcomes.withLock { $0 }
            for (round, outcome) in results.enumerated() {
                #expect(outcome.sorted() == ["expired", "won"], "round \(round): \(outcome)")
            }
            #expect(try db.scalar("SELECT count(*) FROM devices WHERE player_id = ?", [ada.device.player.id]) == .integer(Int64(1 + rounds)))
            #expect(try db.scalar("SELECT count(*) FROM link_codes WHERE claimed_at IS NOT NULL") == .integer(Int64(rounds)))
            #expect(try db.scalar("SELECT count(DISTINCT claimed_by_device_id) FROM link_codes") == .integer(Int64(rounds)))
        }
    }
}
