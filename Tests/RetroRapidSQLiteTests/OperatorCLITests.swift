import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// The operator's CLI as an operator runs it: the real `retrorapid` binary, launched as a
/// process against a real database file in a temporary folder, its exit status and output
/// checked, and the database read back with the repositories.
@Suite struct OperatorCLITests {
    /// Before the launch offer's expiry, so the issue's example is accepted whatever the date.
    static let january = ["RETRORAPID_NOW": "2026-01-15T12:00:00Z"]

    @Test func theLaunchCodeIsCreatedExactlyAndListed() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let created = try RetroRapidExecutable.run(
                ["codes", "create", "ARCTICCONF", "--force", "--discount", "0.99", "--currency", "GBP", "--expires", "2026-02-28T23:59:59Z",
                 "--database", db.path], in: folder, environment: Self.january)
            #expect(created.status == 0, "\(created)")
            #expect(created.stdout.contains("created code ARCTICCONF: discount to £0.99, until 2026-02-28T23:59:59Z"))
            // A word people type: created because forced, with a warning that says why.
            #expect(created.stderr.contains("retrorapid: warning: code ARCTICCONF is easy to guess (it has only letters, so it "
                + "reads as words, which are tried first); created anyway because of --force\n"), "\(created)")

            let code = try SQLCodeRepository(executor: SQLiteExecutor(database: db)).code("ARCTICCONF")
            #expect(code.kind == .discount(Money(minorUnits: 99, currency: "GBP")))
            #expect(code.expiresAt == Date(timeIntervalSince1970: 1_772_323_199))  // 2026-02-28T23:59:59Z
            #expect(code.startsAt == nil && code.maxRedemptions == nil && !code.disabled)

            let listed = try RetroRapidExecutable.run(["codes", "list", "--database", db.path], in: folder, environment: Self.january)
            #expect(listed.status == 0, "\(listed)")
            let lines = listed.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true)
                == ["CODE", "KIND", "PRICE", "WINDOW", "REDEEMED", "DISABLED", "STATUS"])
            let row = lines.dropFirst().first { $0.hasPrefix("ARCTICCONF ") }?.split(separator: " ").map(String.init)
            #expect(row == ["ARCTICCONF", "discount", "£0.99", "until", "2026-02-28T23:59:59Z", "0/no", "cap", "no", "live"])

            // After the expiry the same code lists as expired; an expiry already past is refused.
            let march = ["RETRORAPID_NOW": "2026-03-01T00:00:00Z"]
            let later = try RetroRapidExecutable.run(["codes", "list"], in: folder, environment: march.merging(["RETRORAPID_DATABASE_PATH": db.path]) { $1 })
            #expect(later.status == 0 && later.stdout.contains("expired"), "\(later)")
            let past = try RetroRapidExecutable.run(
                ["codes", "create", "LATECOMER", "--force", "--discount", "0.99", "--currency", "GBP", "--expires", "2026-02-28T23:59:59Z",
                 "--database", db.path], in: folder, environment: march)
            #expect(past.status == 64 && past.stderr.contains("already past"), "\(past)")
            #expect(try SQLCodeRepository(executor: SQLiteExecutor(database: db)).list().map(\.code) == ["ARCTICCONF"])
        }
    }

    @Test func codesAreNormalisedDisabledAndNeverReused() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let unlock = try RetroRapidExecutable.run(
                ["codes", "create", "press-2026", "--force", "--unlock", "--max-redemptions", "10", "--starts", "2026-01-01T00:00:00+01:00",
                 "--database", db.path], in: folder, environment: Self.january)
            #expect(unlock.status == 0, "\(unlock)")
            let code = try SQLCodeRepository(executor: SQLiteExecutor(database: db)).code("PRESS2026")
            #expect(code.kind == .unlock && code.maxRedemptions == 10)
            #expect(code.startsAt == Date(timeIntervalSince1970: 1_767_222_000))  // 2025-12-31T23:00:00Z

            let again = try RetroRapidExecutable.run(["codes", "create", "Press 2026", "--force", "--unlock", "--database", db.path],
                                                     in: folder, environment: Self.january)
            #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again)")

            let disabled = try RetroRapidExecutable.run(["codes", "disable", "press2026", "--database", db.path], in: folder, environment: Self.january)
            #expect(disabled.status == 0 && disabled.stdout.contains("disabled code PRESS2026"), "\(disabled)")
            #expect(try SQLCodeRepository(executor: SQLiteExecutor(database: db)).code("PRESS2026").disabledAt == Date(timeIntervalSince1970: 1_768_478_400))
            let twice = try RetroRapidExecutable.run(["codes", "disable", "PRESS2026", "--database", db.path], in: folder, environment: Self.january)
            #expect(twice.status == 0 && twice.stdout.contains("already disabled"), "\(twice)")
            let unknown = try RetroRapidExecutable.run(["codes", "disable", "NOSUCHCODE", "--database", db.path], in: folder)
            #expect(unknown.status == 1 && unknown.stderr.contains("There is no code NOSUCHCODE"), "\(unknown)")
            let list = try RetroRapidExecutable.run(["codes", "list", "--database", db.path], in: folder)
            #expect(list.stdout.contains("2026-01-15T12:00:00Z") && list.stdout.contains("disabled"), "\(list)")
            // One audit entry for each change, by normalised code; none for the refusals or the
            // second disable, which changed nothing.
            let audit = try SQLAuditLogRepository(executor: SQLiteExecutor(database: db)).entries(limit: 10, before: nil)
            #expect(audit.map(\.action) == ["codes.disable", "codes.create"] && audit.allSatisfy { $0.subject == "PRESS2026" })
            #expect(audit.first?.before == "live, 0 redemptions" && audit.first?.after == "disabled at 2026-01-15T12:00:00Z")
        }
    }

    @Test func aRandomCodeIsStrongAndShownInGroups() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let created = try RetroRapidExecutable.run(["codes", "create", "--random", "--unlock", "--max-redemptions", "50",
                                                        "--database", db.path], in: folder, environment: Self.january)
            #expect(created.status == 0 && !created.stderr.contains("warning"), "\(created)")
            let code = try #require(try SQLCodeRepository(executor: SQLiteExecutor(database: db)).list().first?.code)
            #expect(code.count == CodeStrength.randomLength)
            #expect(try CodeStrength.weaknesses(of: code) == [])
            #expect(created.stdout.contains("created code \(code): unlocks unlimited play, no expiry, at most 50 redemptions"))
            #expect(created.stdout.contains("give it out as \(CodeStrength.grouped(code))"))
        }
    }

    /// Each mistake exits 64 with a message naming it and the usage, and the database is
    /// byte-for-byte as it was (schema and every row).
    @Test func badInputExits64WithAClearMessageAndChangesNothing() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let player = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Ann", deviceLabel: "phone", now: Date()).player
            try SQLCodeRepository(executor: SQLiteExecutor(database: db)).create(code: "EXISTING", kind: .unlock, now: Date())
            let before = try db.dump()

            let cases: [(arguments: [String], message: String)] = [
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--bogus"], "unknown option --bogus"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "0.9.9", "--currency", "GBP"], "--discount expects an amount such as 0.99"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "1,50", "--currency", "GBP"], "--discount expects an amount"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "0.999", "--currency", "GBP"], "at most 2 decimals for GBP"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "-1", "--currency", "GBP"], "--discount expects an amount"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "1e2", "--currency", "GBP"], "--discount expects an amount"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "0.99", "--currency", "GBP", "--unlock"], "not both"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "0.99"], "--discount needs --currency"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "0.99", "--currency", "POUNDS"], "--currency expects a three-letter"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--currency", "GBP"], "an unlock code has no price"),
                (["codes", "create", "K7Q4-M2XD-9P3R"], "say what the code does"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--expires", "2026-02-30T00:00:00Z"], "--expires expects an ISO 8601 time"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--expires", "tomorrow"], "--expires expects an ISO 8601 time"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--expires", "2026-02-28T23:59:59"], "--expires expects"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--starts", "2026-02-28"], "--starts expects"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--max-redemptions", "0"], "--max-redemptions expects"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--max-redemptions", "ten"], "--max-redemptions expects"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--discount", "0", "--currency", "GBP"], "The price must be more than 0"),
                (["codes", "create", "K7Q4-M2XD-9P3R", "--unlock", "--starts", "2026-03-01T00:00:00Z", "--expires", "2026-02-01T00:00:00Z"],
                 "must start before it expires"),
                (["codes", "create", "AB", "--unlock"], "4 to 32 letters and digits"),
                (["codes", "create", "NEW!CODE", "--unlock"], "only letters A–Z and digits"),
                (["codes", "create", "--unlock"], "needs the CODE"),
                (["codes", "create", "ARCTICCONF", "--unlock"], "code ARCTICCONF is easy to guess: it has only letters"),
                (["codes", "create", "summer-sale-2026", "--unlock"], "SUMMERSALE reads as a word"),
                (["codes", "create", "X7K2-X7K2-X7", "--unlock"], "it repeats X7K2"),
                (["codes", "create", "K7Q4", "--unlock"], "it has 4 letters and digits; at least 10 are needed"),
                (["codes", "create", "K7Q4", "--random", "--unlock"], "give either CODE or --random, not both"),
                (["codes", "create", "ONE", "TWO", "--unlock"], "unexpected argument 'TWO'"),
                (["codes"], "say what to do first: create, list or disable"),
                (["players"], "say what to do first: show"),
                (["codes", "frobnicate"], "unknown codes command 'frobnicate'"),
                (["codes", "list", "extra"], "unexpected argument 'extra'"),
                (["codes", "disable"], "needs the CODE"),
                (["players", "show"], "missing PUBLIC_ID"),
                (["players", "grant-unlimited", player.publicID, "--reason", " "], "must say why unlimited play is granted"),
                (["players", "revoke-device", player.publicID, "first"], "DEVICE_ID is the number"),
                (["players", "revoke-device", player.publicID], "missing DEVICE_ID"),
                (["players", "ban", player.publicID], "unknown players command 'ban'"),
                (["orders", "refund", "ord_x"], "unknown orders command 'refund'"),
                (["backup"], "backup needs the FILE"),
                (["verify", "--fix"], "unknown option --fix"),
            ]
            for (arguments, message) in cases {
                let result = try RetroRapidExecutable.run(arguments + ["--database", db.path], in: folder, environment: Self.january)
                #expect(result.status == 64, "\(arguments): \(result)")
                #expect(result.stderr.hasPrefix("retrorapid: "), "\(arguments): \(result)")
                #expect(result.stderr.contains(message), "\(arguments): expected '\(message)' in \(result)")
                // The reason, then one line pointing to the command's --help: no usage burying it.
                #expect(result.stderr.contains("\nRun 'retrorapid \(arguments[0])"), "\(arguments): \(result)")
                #expect(result.stderr.hasSuffix(" --help' for how to call it.\n"), "\(arguments): \(result)")
                #expect(!result.stderr.contains("usage:"), "\(arguments): \(result)")
                #expect(result.stdout.isEmpty, "\(arguments): \(result)")
            }
            #expect(try db.dump() == before)
        }
    }

    @Test func grantingUnlimitedPlayToAnUnknownPlayerExits1AndChangesNothing() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            _ = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Ann", deviceLabel: "phone", now: Date())
            let before = try db.dump()
            let result = try RetroRapidExecutable.run(["players", "grant-unlimited", "ZZZZZZZZZZZZ", "--database", db.path], in: folder)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("no player has the id 'ZZZZZZZZZZZZ'"), "\(result)")
            #expect(!result.stderr.contains("usage:"), "a refusal is not a usage mistake: \(result)")
            #expect(try db.dump() == before)

            for arguments in [["players", "show", "ZZZZZZZZZZZZ"], ["players", "revoke-device", "ZZZZZZZZZZZZ", "1"]] {
                let other = try RetroRapidExecutable.run(arguments + ["--database", db.path], in: folder)
                #expect(other.status == 1 && other.stderr.contains("no player has the id 'ZZZZZZZZZZZZ'"), "\(arguments): \(other)")
            }
            // A database that is not there is named, not created.
            let missing = folder.appendingPathComponent("missing.sqlite").path
            let noFile = try RetroRapidExecutable.run(["codes", "list", "--database", missing], in: folder)
            #expect(noFile.status == 1 && noFile.stderr.contains("no database at \(missing)"), "\(noFile)")
            #expect(!FileManager.default.fileExists(atPath: missing))
        }
    }

    @Test func aPlayerIsRenamedByTheDisplayNameRulesAndTheChangeIsAudited() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let (player, _) = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(
                displayName: "Rude Name", deviceLabel: "phone", now: Date())
            let before = try db.dump()
            let refused = try RetroRapidExecutable.run(["players", "rename", player.publicID, String(repeating: "x", count: 25),
                                                        "--database", db.path], in: folder)
            #expect(refused.status == 64, "\(refused)")
            #expect(try db.dump() == before)

            let renamed = try RetroRapidExecutable.run(["players", "rename", player.publicID, "Racer 7", "--database", db.path], in: folder)
            #expect(renamed.status == 0 && renamed.stdout.contains("from Rude Name to Racer 7"), "\(renamed)")
            let again = try RetroRapidExecutable.run(["players", "rename", player.publicID, "Racer 7", "--database", db.path], in: folder)
            #expect(again.status == 0 && again.stdout.contains("nothing changed"), "\(again)")
            let entries = try SQLAuditLogRepository(executor: SQLiteExecutor(database: db)).entries(limit: 10, before: nil)
            #expect(entries.map(\.action) == ["players.rename"])
            #expect(entries.first?.before == "display name Rude Name" && entries.first?.after == "display name Racer 7")
            #expect(entries.first?.actor.hasPrefix("cli:") == true)
        }
    }

    @Test func playersShowGrantAndRevoke() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let now = Date()
            let player = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Ann Racer", deviceLabel: "Firefox on Linux", now: now).player
            try SQLQuotaRepository(executor: SQLiteExecutor(database: db)).consumePlay(playerID: player.id, now: now)
            try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(NewGame(
                playerID: player.id, level: .fast, seed: 7, inputLog: InputLog(steps: 40, moves: []), score: 12, steps: 40,
                endReason: .crash, startedAt: now.addingTimeInterval(-20), endedAt: now, durationMilliseconds: 20_000))
            let order = try SQLOrderRepository(executor: SQLiteExecutor(database: db)).createOrder(playerID: player.id, now: now)

            let shown = try RetroRapidExecutable.run(["players", "show", player.publicID.lowercased(), "--database", db.path], in: folder)
            #expect(shown.status == 0, "\(shown)")
            for fact in [player.publicID, "Ann Racer", "Firefox on Linux", "4 of 5 free plays left today", "price due now £2.99",
                         order.publicID, "pending", "12 (#1 of 1)"] {
                #expect(shown.stdout.contains(fact), "'\(fact)' missing from: \(shown.stdout)")
            }

            let granted = try RetroRapidExecutable.run(
                ["players", "grant-unlimited", player.publicID, "--reason", "press: Retro Gamer", "--database", db.path], in: folder)
            #expect(granted.status == 0 && granted.stdout.contains("granted unlimited play"), "\(granted)")
            let entitlement = try SQLEntitlementRepository(executor: SQLiteExecutor(database: db)).unlimited(playerID: player.id)
            #expect(entitlement?.source == .operator && entitlement?.reference == "press: Retro Gamer")
            let regrant = try RetroRapidExecutable.run(["players", "grant-unlimited", player.publicID, "--database", db.path], in: folder)
            #expect(regrant.status == 0 && regrant.stdout.contains("already has unlimited play"), "\(regrant)")
            #expect(try SQLEntitlementRepository(executor: SQLiteExecutor(database: db)).unlimited(playerID: player.id) == entitlement)

            // The operator may revoke a player's only device (the player may not).
            let device = try #require(try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).devices(playerID: player.id).first)
            let unknownDevice = try RetroRapidExecutable.run(
                ["players", "revoke-device", player.publicID, String(device.id + 100), "--database", db.path], in: folder)
            #expect(unknownDevice.status == 1 && unknownDevice.stderr.contains("has no device \(device.id + 100)"), "\(unknownDevice)")
            let revoked = try RetroRapidExecutable.run(
                ["players", "revoke-device", player.publicID, String(device.id), "--database", db.path], in: folder)
            #expect(revoked.status == 0 && revoked.stdout.contains("revoked device \(device.id) (Firefox on Linux)"), "\(revoked)")
            #expect(revoked.stderr.contains("no signed-in device left"), "\(revoked)")
            #expect(try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).devices(playerID: player.id).allSatisfy(\.isRevoked))
        }
    }

    @Test func anOrderIsMarkedPaidByTheOperator() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let player = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Bob", deviceLabel: "", now: Date()).player
            let order = try SQLOrderRepository(executor: SQLiteExecutor(database: db)).createOrder(playerID: player.id, now: Date())
            let paid = try RetroRapidExecutable.run(
                ["orders", "mark-paid", order.publicID, "--reason", "bank transfer 2026-01-15", "--database", db.path], in: folder)
            #expect(paid.status == 0 && paid.stdout.contains("is paid"), "\(paid)")
            let stored = try SQLOrderRepository(executor: SQLiteExecutor(database: db)).order(publicID: order.publicID)
            #expect(stored.status == .paid && stored.providerEventID == "operator: bank transfer 2026-01-15")
            #expect(try SQLEntitlementRepository(executor: SQLiteExecutor(database: db)).unlimited(playerID: player.id)?.source == .order)

            let unknown = try RetroRapidExecutable.run(["orders", "mark-paid", "ord_unknown", "--database", db.path], in: folder)
            #expect(unknown.status == 1 && unknown.stderr.contains("There is no order ord_unknown"), "\(unknown)")
        }
    }

    @Test func backupIsACheckedCopyWithTheRowsAndNeverOverwritesUnasked() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            try SQLCodeRepository(executor: SQLiteExecutor(database: db)).create(code: "ARCTICCONF", kind: .discount(Money(minorUnits: 99, currency: "GBP")), now: Date())
            let writer = try RetroRapidExecutable.run(
                ["crash-writer", "--database", db.path, "--migrations", productMigrations.path, "--games", "120"], in: folder)
            #expect(writer.status == 0, "\(writer)")

            let copyPath = folder.appendingPathComponent("backup.sqlite").path
            let backup = try RetroRapidExecutable.run(["backup", copyPath, "--database", db.path], in: folder)
            #expect(backup.status == 0, "\(backup)")
            #expect(backup.stdout.contains("integrity_check: ok") && backup.stdout.contains("bytes"), "\(backup)")
            #expect(backup.stdout.contains("120 games") && backup.stdout.contains("1 promo_codes"), "\(backup)")
            do {
                let copy = try Database(path: copyPath)
                #expect(try copy.column("PRAGMA integrity_check") == [.text("ok")])
                #expect(try copy.dump() == db.dump())
            }

            // An existing file is kept unless --force says otherwise.
            try SQLGameRepository(executor: SQLiteExecutor(database: db)).record(NewGame(
                playerID: 1, level: .cruise, seed: 1, inputLog: InputLog(steps: 10, moves: []), score: 0, steps: 10,
                endReason: .abandoned, startedAt: Date(), endedAt: Date(), durationMilliseconds: 0))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: copyPath))
            let refused = try RetroRapidExecutable.run(["backup", copyPath, "--database", db.path], in: folder)
            #expect(refused.status == 1 && refused.stderr.contains("already exists") && refused.stderr.contains("--force"), "\(refused)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: copyPath)) == bytes)
            let forced = try RetroRapidExecutable.run(["backup", copyPath, "--force", "--database", db.path], in: folder)
            #expect(forced.status == 0 && forced.stdout.contains("121 games"), "\(forced)")
            #expect(try Database(path: copyPath).scalar("SELECT count(*) FROM games") == .integer(121))

            let nowhere = try RetroRapidExecutable.run(["backup", folder.appendingPathComponent("no/such/folder.sqlite").path, "--database", db.path], in: folder)
            #expect(nowhere.status == 1 && nowhere.stderr.contains("does not exist"), "\(nowhere)")
        }
    }

    /// The backup runs while another process commits games as fast as it can, as the server
    /// would: the copy is intact and holds every game acknowledged before the backup began.
    @Test func backupIsConsistentWhileAWriterRuns() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("live.sqlite").path
            let writer = try CrashWriterProcess.start(database: path, in: folder)
            defer { writer.kill() }
            let beforeBackup = try writer.readAcknowledgements(count: 100)
            let copyPath = folder.appendingPathComponent("live-backup.sqlite").path
            let backup = try RetroRapidExecutable.run(["backup", copyPath, "--database", path], in: folder)
            let duringBackup = try writer.readAcknowledgements(count: 20)
            writer.kill()
            #expect(backup.status == 0 && backup.stdout.contains("integrity_check: ok"), "\(backup)")
            #expect(!duringBackup.isEmpty, "the writer kept committing while the backup ran")

            let copy = try Database(path: copyPath)
            #expect(try copy.column("PRAGMA integrity_check") == [.text("ok")])
            let copied = Set(try copy.column("SELECT id FROM games").compactMap { value -> Int64? in
                if case .integer(let id) = value { return id }
                return nil
            })
            #expect(Set(beforeBackup).isSubset(of: copied), "acknowledged before the backup but missing from it: \(Set(beforeBackup).subtracting(copied).sorted())")
            #expect(try DurabilityCheck.problems(in: copy, acknowledged: Set(beforeBackup)).isEmpty)
        }
    }

    @Test func verifyPassesHonestGamesAndListsATamperedScore() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let writer = try RetroRapidExecutable.run(
                ["crash-writer", "--database", db.path, "--migrations", productMigrations.path, "--games", "60"], in: folder)
            #expect(writer.status == 0, "\(writer)")
            let honest = try RetroRapidExecutable.run(["verify", "--database", db.path], in: folder)
            #expect(honest.status == 0, "\(honest)")
            #expect(honest.stdout.contains("verified 60 games") && honest.stdout.contains("every stored score matches"), "\(honest)")

            let tampered = try #require(try db.column("SELECT id FROM games WHERE score > 0 ORDER BY id LIMIT 1 OFFSET 3").first)
            guard case .integer(let gameID) = tampered else { Issue.record("no game to tamper with"); return }
            try db.prepare("UPDATE games SET score = score + 1 WHERE id = ?").execute([gameID])
            let caught = try RetroRapidExecutable.run(["verify", "--database", db.path], in: folder)
            #expect(caught.status == 1, "\(caught)")
            // crash-writer's games have no public id: they are named by their row.
            let line = caught.stdout.split(separator: "\n").first { $0.hasPrefix("#\(gameID) ") }
            #expect(line?.contains("stored, ") == true, "\(caught)")
            #expect(caught.stdout.contains("1 of 60 games do not match their replay"), "\(caught)")
        }
    }

    @Test func helpListsTheOperatorCommands() throws {
        try withTemporaryDirectory { folder in
            let help = try RetroRapidExecutable.run(["help"], in: folder)
            #expect(help.status == 0)
            for command in ["codes", "players", "orders", "games", "backup", "verify"] {
                #expect(help.stdout.contains("\n  \(command) "), "\(command) missing from: \(help.stdout)")
            }
            let codes = try RetroRapidExecutable.run(["help", "codes"], in: folder)
            #expect(codes.status == 0 && codes.stdout.contains("retrorapid codes create ARCTICCONF --force --discount 0.99"))
        }
    }

    /// An operator's account as the CLI makes it: the password printed once is the one the
    /// stored hash matches, a reset replaces it, a disabled account stays disabled, and a
    /// mistake is refused before anything is written.
    @Test func operatorAccountsAreAddedResetAndDisabled() throws {
        try withTemporaryDirectory { folder in
            let db = try RetroRapidExecutable.migratedDatabase(in: folder)
            let operators = SQLOperatorRepository(executor: SQLiteExecutor(database: db))
            func run(_ arguments: [String]) throws -> CLIResult {
                try RetroRapidExecutable.run(["operators"] + arguments + ["--database", db.path], in: folder, environment: Self.january)
            }
            func printedPassword(_ output: String) -> String? {
                output.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) }
            }

            let added = try run(["add", "Ada.L", "--role", "admin"])
            #expect(added.status == 0, "\(added)")
            #expect(added.stdout.hasPrefix("added operator ada.l (admin); their password, shown only now:\n"), "\(added)")
            let first = try #require(printedPassword(added.stdout))
            #expect(first.count == 23)
            let stored = try operators.account(named: "ada.l")
            #expect(stored.account.role == .admin && OperatorPassword.matches(first, stored: stored.passwordHash))
            #expect(!stored.passwordHash.contains(first) && !stored.passwordHash.contains(first.replacingOccurrences(of: "-", with: "")))

            let reset = try run(["reset", "ada.l"])
            #expect(reset.status == 0, "\(reset)")
            let second = try #require(printedPassword(reset.stdout))
            let afterReset = try operators.account(named: "ada.l").passwordHash
            #expect(OperatorPassword.matches(second, stored: afterReset) && !OperatorPassword.matches(first, stored: afterReset))

            let listed = try run(["list"])
            #expect(listed.status == 0, "\(listed)")
            #expect(listed.stdout.split(separator: "\n").first?.split(separator: " ") == ["NAME", "ROLE", "ADDED", "PASSWORD", "SET", "DISABLED"])
            #expect(listed.stdout.contains("ada.l") && listed.stdout.contains("admin") && !listed.stdout.contains(second))

            #expect(try run(["disable", "ada.l"]).status == 0)
            let again = try run(["reset", "ada.l"])
            #expect(again.status == 1 && again.stderr.contains("disabled"), "\(again)")
            #expect(try operators.account(named: "ada.l").passwordHash == afterReset)

            // Mistakes: refused before the database is written, with the usage's pointer or the reason.
            let taken = try run(["add", "ADA.L"])
            #expect(taken.status == 1 && taken.stderr.contains("already an operator named ada.l"), "\(taken)")
            let badRole = try run(["add", "bob", "--role", "owner"])
            #expect(badRole.status == 64 && badRole.stderr.contains("--role expects viewer or admin"), "\(badRole)")
            let badName = try run(["add", "bob smith"])
            #expect(badName.status == 64, "\(badName)")
            #expect(try operators.list().map(\.name) == ["ada.l"])

            // The audit log holds the three changes, newest first, by the system user who ran
            // them, and no password; the refused ones left nothing.
            let entries = try SQLAuditLogRepository(executor: SQLiteExecutor(database: db)).entries(limit: 10, before: nil)
            #expect(entries.map(\.action) == ["operators.disable", "operators.reset", "operators.add"])
            #expect(entries.allSatisfy { $0.actor.hasPrefix("cli:") && $0.subject == "ada.l" })
            #expect(entries.last?.after == "admin, password set")
            let audit = try RetroRapidExecutable.run(["audit", "--database", db.path], in: folder, environment: Self.january)
            #expect(audit.status == 0, "\(audit)")
            #expect(audit.stdout.contains("operators.reset") && audit.stdout.contains("operators.add"))
            for password in [first, second] {
                #expect(!audit.stdout.contains(password) && !audit.stdout.contains(password.replacingOccurrences(of: "-", with: "")))
            }
            let badPage = try RetroRapidExecutable.run(["audit", "--before", "x", "--database", db.path], in: folder)
            #expect(badPage.status == 64, "\(badPage)")
        }
    }
}

// MARK: - The binary under test

/// One finished run of the binary.
struct CLIResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// The `retrorapid` executable that `swift build` put next to the test bundle, and how to run it.
enum RetroRapidExecutable {
    /// Looks next to the test bundle: `swift build --build-tests` (and `make test`) builds the
    /// product into the same folder as `RetroRapidPackageTests.xctest`, debug or release.
    /// `RETRORAPID_TEST_EXECUTABLE` overrides the search.
    static func url() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["RETRORAPID_TEST_EXECUTABLE"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else { throw ExecutableMissing(searched: [path]) }
            return URL(fileURLWithPath: path)
        }
        var folders: [URL] = []
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0])
        folders.append(testBinary.deletingLastPathComponent())
        folders.append(testBinary.resolvingSymlinksInPath().deletingLastPathComponent())
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        folders.append(Bundle.main.bundleURL)
        folders.append(Bundle.main.bundleURL.deletingLastPathComponent())
        // macOS: the tests are a loadable .xctest bundle inside the build folder.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        #if os(Linux)
        folders.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        #endif
        for folder in folders {
            let candidate = folder.appendingPathComponent("retrorapid")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ExecutableMissing(searched: folders.map(\.path))
    }

    struct ExecutableMissing: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "the retrorapid executable was not found next to the test bundle (looked in: \(Set(searched).sorted().joined(separator: ", "))). "
                + "Build it with the tests: 'swift build --build-tests' then 'swift test --skip-build', or 'make test'; "
                + "or set RETRORAPID_TEST_EXECUTABLE to its path."
        }
    }

    /// The environment for a run: this process's, without any RETRORAPID_ setting that could
    /// point the binary at another database, plus the repository's migrations and `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RETRORAPID_") }
        environment["RETRORAPID_MIGRATIONS_PATH"] = productMigrations.path
        return environment.merging(extra) { $1 }
    }

    /// Runs the binary to its end in `folder` (its working directory, so no default path
    /// reaches the checkout) and returns its status and output. Killed after `timeout`.
    static func run(
        _ arguments: [String], in folder: URL, environment extra: [String: String] = [:], timeout: TimeInterval = 120
    ) throws -> CLIResult {
        let process = Process()
        process.executableURL = try url()
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = environment(extra)
        let name = UUID().uuidString
        let outURL = folder.appendingPathComponent("\(name).stdout")
        let errURL = folder.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("retrorapid \(arguments.joined(separator: " ")) ran longer than \(Int(timeout)) s and was killed")
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        )
    }

    /// A database file in `folder` created and migrated by `retrorapid migrate`, opened.
    static func migratedDatabase(in folder: URL) throws -> Database {
        let path = folder.appendingPathComponent("operator.sqlite").path
        let migrate = try run(["migrate", "--database", path, "--migrations", productMigrations.path], in: folder)
        guard migrate.status == 0 else {
            throw CLIFailure(description: "retrorapid migrate failed: \(migrate)")
        }
        return try Database(path: path)
    }

    struct CLIFailure: Error, CustomStringConvertible {
        var description: String
    }
}
