import Foundation
import RetroRapidDomain
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
        let players = SQLitePlayerRepository(database: db)
        let (_, token) = try players.createPlayer(displayName: name, deviceLabel: "Laptop", now: t0)
        return (try players.authenticate(token: token, now: t0), token)
    }

    @Test func codeLooksRightAndClaimGivesANewDeviceOfTheSamePlayer() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let players = SQLitePlayerRepository(database: db)
            let codes = SQLiteLinkCodeRepository(database: db)
            let ada = try signedInPlayer(db)

            let issued = try codes.createCode(for: ada.device, now: at(0.5))
            #expect(issued.code.wholeMatch(of: /[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}/) != nil)
            #expect(issued.expiresAt == at(600))

            let (player, token) = try codes.claim(code: issued.code, deviceLabel: "Phone", now: at(30))
            #expect(player == ada.device.player)
            #expect(token != ada.token)
            #expect(token.count == 43)
            let phone = try players.authenticate(token: token, now: at(31))
            #expect(phone.player == ada.device.player)
            #expect(phone.deviceID != ada.device.deviceID)
            #expect(try players.devices(playerID: player.id).map(\.label) == ["Laptop", "Phone"])
            #expect(try db.column("SELECT claimed_by_device_id FROM link_codes") == [.integer(phone.deviceID)])
        }
    }

    @Test func onlyTheCodesHashIsStored() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let issued = try SQLiteLinkCodeRepository(database: db).createCode(for: try signedInPlayer(db).device, now: t0)
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

    @Test func entryIgnoresCaseDashesAndSpacesAndReadsOAsZeroAndILAsOne() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let codes = SQLiteLinkCodeRepository(database: db, policy: .init(maximumPerWindow: 10_000))
            let ada = try signedInPlayer(db)
            let variants: [(String) -> String] = [
                { $0.lowercased() },
                { $0.replacingOccurrences(of: "-", with: "") },
                { " " + $0.lowercased().replacingOccurrences(of: "-", with: " - ") + " " },
                { $0.replacingOccurrences(of: "0", with: "o").replacingOccurrences(of: "1", with: "l") },
                { $0.replacingOccurrences(of: "0", with: "O").replacingOccurrences(of: "1", with: "I") },
                { $0.replacingOccurrences(of: "1", with: "L") },
            ]
            for (index, variant) in zip(variants.indices, variants) {
                // Codes are random: draw until this spelling really differs from the code shown
                // (a code with a 0 or 1 for the O/I/L spellings), so no case passes vacuously.
                var issued = try codes.createCode(for: ada.device, now: t0)
                while variant(issued.code) == issued.code {
                    issued = try codes.createCode(for: ada.device, now: t0)
                }
                let (player, _) = try codes.claim(code: variant(issued.code), deviceLabel: "Device \(index)", now: at(1))
                #expect(player == ada.device.player)
            }
        }
    }

    @Test func parsingNormalisesOneWayAndRefusesWhatIsNotACode() {
        #expect(LinkCode(parsing: "k0il-OoLz")?.normalized == "K011001Z")
        #expect(LinkCode(parsing: "k0il-OoLz")?.displayText == "K011-001Z")
        #expect(LinkCode(parsing: " K7Q4 m2xd ")?.displayText == "K7Q4-M2XD")
        for bad in ["", "K7Q4-M2X", "K7Q4-M2XDD", "K7Q4-M2XU", "K7Q4_M2XD", "K7Q4.M2XD", "K7Q4-M2XÐ", "K7Q4\u{200B}M2XD", String(repeating: "-", count: 100) + "K7Q4M2XD"] {
            #expect(LinkCode(parsing: bad) == nil, "\(bad) should not parse")
        }
        #expect(!"\(LinkCode(parsing: "K7Q4-M2XD")!)".contains("K7Q4"))
    }

    @Test func malformedUnknownUsedAndExpiredCodesAreRefusedAndChangeNothing() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let codes = SQLiteLinkCodeRepository(database: db)
            let ada = try signedInPlayer(db)
            let used = try codes.createCode(for: ada.device, now: t0)
            _ = try codes.claim(code: used.code, deviceLabel: "Phone", now: at(10))
            let old = try codes.createCode(for: ada.device, now: at(20))
            let live = try codes.createCode(for: ada.device, now: at(20))

            let before = try db.dump()
            let expectations: [(String, String, StoreError.Code, String)] = [
                ("K7Q4-M2X", "Tablet", .invalid, "8 letters and digits"),
                ("ZZZZ-ZZZZ", "Tablet", .notFound, "No link code matches"),
                (used.code, "Tablet", .expired, "only once"),
                (old.code, "Tablet", .expired, "expired"),
                (live.code, "Tab\u{202E}let", .invalid, "device label"),
            ]
            for (code, label, expected, words) in expectations {
                let error = #expect(throws: StoreError.self) { try codes.claim(code: code, deviceLabel: label, now: at(620)) }
                #expect(error?.code == expected, "\(code)")
                #expect(error?.message.contains(words) == true, "\(error?.message ?? "no error") should say \(words)")
            }
            #expect(try db.dump() == before)
        }
    }

    @Test func codeWorksUntilItsLifetimeEndsAndLifetimeIsAParameter() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let codes = SQLiteLinkCodeRepository(database: db)
            let ada = try signedInPlayer(db)
            let first = try codes.createCode(for: ada.device, now: t0)
            let second = try codes.createCode(for: ada.device, now: t0)
            _ = try codes.claim(code: first.code, deviceLabel: "", now: at(599))
            let late = #expect(throws: StoreError.self) { try codes.claim(code: second.code, deviceLabel: "", now: at(600)) }
            #expect(late?.code == .expired)
            #expect(late?.message.contains("10 minutes") == true)

            let brief = SQLiteLinkCodeRepository(database: db, policy: .init(lifetime: 120))
            let short = try brief.createCode(for: ada.device, now: at(1000))
            #expect(short.expiresAt == at(1120))
            let error = #expect(throws: StoreError.self) { try brief.claim(code: short.code, deviceLabel: "", now: at(1120)) }
            #expect(error?.message.contains("2 minutes") == true)
        }
    }

    @Test func creationIsRateLimitedPerPlayerWithARetryTime() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let codes = SQLiteLinkCodeRepository(database: db)
            let ada = try signedInPlayer(db)
            let bob = try signedInPlayer(db, name: "Bob")

            for minute in 0..<5 {
                #expect(try codes.retryAfter(playerID: ada.device.player.id, now: at(Double(minute) * 60)) == nil)
                _ = try codes.createCode(for: ada.device, now: at(Double(minute) * 60))
            }
            let before = try db.dump()
            let error = #expect(throws: StoreError.self) { try codes.createCode(for: ada.device, now: at(300)) }
            #expect(error?.code == .rateLimited)
            #expect(error?.message.contains("Try again in 5 minutes") == true)
            #expect(try codes.retryAfter(playerID: ada.device.player.id, now: at(300)) == 300)
            #expect(try db.dump() == before)

            // Another player is not held back by Ada's codes.
            _ = try codes.createCode(for: bob.device, now: at(300))

            // At t0 + 10 min the first code leaves the window; then the one from minute 1 is the
            // oldest of 5 again, and leaves at t0 + 11 min.
            _ = try codes.createCode(for: ada.device, now: at(600))
            let again = #expect(throws: StoreError.self) { try codes.createCode(for: ada.device, now: at(601)) }
            #expect(again?.code == .rateLimited)
            #expect(again?.message.contains("Try again in 59 seconds") == true)
            #expect(try codes.retryAfter(playerID: ada.device.player.id, now: at(601)) == 59)
            _ = try codes.createCode(for: ada.device, now: at(660))
        }
    }

    @Test func codesAreForgottenADayAfterTheyExpire() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let codes = SQLiteLinkCodeRepository(database: db)
            let ada = try signedInPlayer(db)
            let bob = try signedInPlayer(db, name: "Bob")
            let old = try codes.createCode(for: ada.device, now: t0)
            _ = try codes.createCode(for: bob.device, now: t0)
            let kept = try codes.createCode(for: ada.device, now: at(60))

            // Ada's first code expired at t0 + 10 min; a day later it goes when she creates one.
            _ = try codes.createCode(for: ada.device, now: at(600 + 86_400 + 1))
            #expect(try db.scalar("SELECT count(*) FROM link_codes WHERE player_id = ?", [ada.device.player.id]) == .integer(2))
            #expect(try db.scalar("SELECT count(*) FROM link_codes WHERE player_id = ?", [bob.device.player.id]) == .integer(1))
            let forgotten = #expect(throws: StoreError.self) { try codes.claim(code: old.code, deviceLabel: "", now: at(600 + 86_400 + 2)) }
            #expect(forgotten?.code == .notFound)
            let remembered = #expect(throws: StoreError.self) { try codes.claim(code: kept.code, deviceLabel: "", now: at(600 + 86_400 + 2)) }
            #expect(remembered?.code == .expired)
        }
    }

    @Test func revokedDeviceCannotCreateAndItsUnclaimedCodesStopWorking() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let players = SQLitePlayerRepository(database: db)
            let codes = SQLiteLinkCodeRepository(database: db)
            let ada = try signedInPlayer(db)
            let (_, phoneToken) = try codes.claim(code: try codes.createCode(for: ada.device, now: t0).code, deviceLabel: "Phone", now: at(1))
            _ = try players.authenticate(token: phoneToken, now: at(2))
            let pending = try codes.createCode(for: ada.device, now: at(3))

            try players.revokeDevice(playerID: ada.device.player.id, deviceID: ada.device.deviceID, now: at(4))
            let before = try db.dump()
            let claim = #expect(throws: StoreError.self) { try codes.claim(code: pending.code, deviceLabel: "Thief", now: at(5)) }
            #expect(claim?.code == .expired)
            #expect(claim?.message.contains("signed out") == true)
            let create = #expect(throws: StoreError.self) { try codes.createCode(for: ada.device, now: at(6)) }
            #expect(create?.code == .unauthorized)
            #expect(try db.dump() == before)
        }
    }

    /// Two devices, on two connections to the same file on two threads, claim the same code at
    /// the same moment, round after round: each round exactly one gets a token.
    @Test func twoDevicesRacingForOneCodeExactlyOneWins() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let rounds = 60
            let codes = SQLiteLinkCodeRepository(database: db, policy: .init(maximumPerWindow: rounds))
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
                        let claims = SQLiteLinkCodeRepository(database: connection)
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
