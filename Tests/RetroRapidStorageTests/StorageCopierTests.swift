import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidRules
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorage
import RetroRapidStorageFixtures
import Testing

/// `StorageCopier`: a real SQLite file filled through the SQLite repositories, copied into a
/// fresh database on the test PostgreSQL server, then compared table by table with SQL of the
/// tests' own (not the copier's digest), and every refusal checked to leave the target as it was.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (a PostgreSQL server for the tests)"))
struct StorageCopierTests {
    let t0 = utc("2026-01-15T10:00:00Z")

    // MARK: - Copying everything

    @Test func everyTableIsCopiedRowForRowWithItsIds() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, url in
                let report = try StorageCopier(from: sqlite, to: target, batchRows: 3).copy()

                let tables = try sqliteTables(sqlite.database)
                var inserted = 0
                #expect(Set(report.tables.map(\.name)) == Set(tables))
                #expect(report.appliedTargetMigrations == ["0001_initial", "0002_cluster_nodes", "0003_play_together", "0004_rate_limits", "0005_operators", "0006_audit_log", "0007_cluster_node_settings",
                                                             "0008_checkpoint_index_by_game", "0009_checkpoint_slices"])
                for table in tables {
                    let expected = try sqliteRows(sqlite.database, table)
                    // The fixture reaches every table, so a table added later fails here until it does.
                    #expect(!expected.isEmpty, "the fixture leaves \(table) empty")
                    #expect(try postgresRows(target.connection, table) == expected, "table \(table) differs")
                    #expect(report.tables.first { $0.name == table }?.rows == expected.count)
                    if table != "score_counts" { inserted += expected.count }
                }
                #expect(report.tables.first { $0.name == "score_counts" }?.rebuiltByTrigger == true)
                #expect(report.copiedRows == inserted)
                // Parents before children: every foreign key points to a table copied earlier.
                let order = report.tables.map(\.name)
                for (child, parent) in [("devices", "players"), ("link_codes", "devices"), ("code_redemptions", "promo_codes"),
                                        ("orders", "promo_codes"), ("webhook_events", "orders"), ("best_scores", "games"),
                                        ("race_entries", "races"), ("race_entries", "games"), ("daily_attempts", "players")] {
                    #expect(order.firstIndex(of: parent)! < order.firstIndex(of: child)!, "\(parent) must come before \(child)")
                }
                _ = url
            }
        }
    }

    @Test func flagsBecomeBooleansAndHashesBytea() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, _ in
                try StorageCopier(from: sqlite, to: target).copy()
                let pg = target.connection
                let types = try pg.execute("""
                    SELECT table_name || '.' || column_name, data_type FROM information_schema.columns
                    WHERE table_schema = current_schema() AND column_name IN ('practice', 'free_play', 'play_refunded', 'token_hash', 'code_hash')
                    ORDER BY 1
                    """).map { "\($0.string(at: 0)) \($0.string(at: 1))" }
                #expect(types == ["devices.token_hash bytea", "games.play_refunded boolean", "games.practice boolean",
                                  "link_codes.code_hash bytea", "races.practice boolean", "running_games.free_play boolean", "running_games.practice boolean"])
                let sqlitePractice = try sqlite.database.prepare("SELECT count(*) FROM games WHERE practice = 1").query { $0.int(at: 0) }.first
                #expect(try pg.execute("SELECT count(*) FROM games WHERE practice").first?.int(at: 0) == sqlitePractice)
                #expect(sqlitePractice == 2)
                #expect(try pg.execute("SELECT count(*) FROM games WHERE play_refunded").first?.int(at: 0) == 1)
                let hashes = try sqlite.database.prepare("SELECT id, token_hash FROM devices ORDER BY id").query { ($0.int64(at: 0), $0.blob(at: 1)) }
                let copied = try pg.execute("SELECT id, token_hash FROM devices ORDER BY id").map { ($0.int64(at: 0), $0.bytes(at: 1)) }
                #expect(hashes.map(\.0) == copied.map(\.0) && hashes.map(\.1) == copied.map(\.1))
                #expect(hashes.allSatisfy { $0.1.count == 32 })
            }
        }
    }

    @Test func theSequencesContinueAfterTheCopiedIds() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, _ in
                let report = try StorageCopier(from: sqlite, to: target).copy()
                let pg = target.connection
                let identities = try pg.execute("""
                    SELECT table_name, column_name FROM information_schema.columns
                    WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY 1
                    """).map { ($0.string(at: 0), $0.string(at: 1)) }
                #expect(identities.count == 13)
                for (table, column) in identities {
                    let largest = try sqlite.database.prepare("SELECT coalesce(max(\(column)), 0) FROM \(table)").query { $0.int64(at: 0) }.first ?? 0
                    #expect(largest > 0, "the fixture leaves \(table) empty")
                    #expect(report.nextIDs["\(table).\(column)"] == largest + 1)
                    let next = try pg.execute("SELECT nextval(pg_get_serial_sequence($1, $2))", [table, column]).first?.int64(at: 0)
                    #expect(next == largest + 1, "\(table).\(column)")
                }
                // A new row through the identity default, as a repository writes one.
                let players = try sqlite.database.prepare("SELECT max(id) FROM players").query { $0.int64(at: 0) }.first ?? 0
                let newID = try pg.execute("""
                    INSERT INTO players (public_id, display_name, created_at) VALUES ('after-copy', 'New', '2026-02-01T00:00:00Z') RETURNING id
                    """).first?.int64(at: 0)
                #expect(newID == players + 2)  // players + 1 went to the nextval above
            }
        }
    }

    @Test func theCopyIsOfOneSnapshotWhateverIsWrittenMeanwhile() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            let before = try sqliteRows(sqlite.database, "players")
            // Another connection to the file, as a running server has, writing while the copy runs.
            let writer = try Database(path: sqlite.database.path)
            let otherPlayers = SQLPlayerRepository(executor: SQLiteExecutor(database: writer))
            try withTarget { target, _ in
                var written = 0
                var seen: [StorageCopier.Progress] = []
                try StorageCopier(from: sqlite, to: target, batchRows: 2).copy { progress in
                    seen.append(progress)
                    _ = try? otherPlayers.createPlayer(displayName: "Late \(written)", deviceLabel: "Phone", now: t0)
                    written += 1
                }
                #expect(written > 10)
                #expect(try writer.prepare("SELECT count(*) FROM players").query { $0.int(at: 0) }.first == before.count + written)
                #expect(try postgresRows(target.connection, "players") == before)
                // Progress: rising, and ending at the total.
                #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.copiedRows < $1.copiedRows })
                #expect(seen.last.map { $0.copiedRows == $0.totalRows } == true)
            }
        }
    }

    // MARK: - Refusals

    @Test func aTargetThatHoldsRowsIsRefusedAndLeftAsItWas() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, _ in
                try target.migrate()
                try target.connection.execute("""
                    INSERT INTO players (public_id, display_name, created_at) VALUES ('already-here', 'Someone', '2026-01-01T00:00:00Z')
                    """)
                let before = try postgresDump(target.connection)
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .targetNotEmpty)
                #expect(refusal.message.contains("already holds rows (in players)"))
                #expect(try postgresDump(target.connection) == before)
                #expect(try target.connection.execute("SELECT nextval(pg_get_serial_sequence('players', 'id'))").first?.int64(at: 0) == 2)
            }
        }
    }

    @Test func aTargetWithRowsInAnyTableIsRefused() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, _ in
                try target.migrate()
                try target.connection.execute("""
                    INSERT INTO promo_codes (code, kind, created_at) VALUES ('LEFTOVER', 'unlock', '2026-01-01T00:00:00Z')
                    """)
                let before = try postgresDump(target.connection)
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .targetNotEmpty && refusal.message.contains("promo_codes"))
                #expect(try postgresDump(target.connection) == before)
            }
        }
    }

    @Test func twoCopiesAtOnceIntoOneDatabaseFillItOnce() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, url in
                let path = sqlite.database.path
                let outcomes = Outcomes()
                // Each copy on its own thread with its own connections, as two operators would.
                DispatchQueue.concurrentPerform(iterations: 2) { _ in
                    do {
                        let source = SQLiteStorage(database: try Database(path: path), migrations: productMigrations)
                        let destination = PostgresStorage(connection: try PostgresConnection(conninfo: url),
                                                          migrations: productMigrations.appendingPathComponent("postgresql"), location: url)
                        try StorageCopier(from: source, to: destination).copy()
                        outcomes.append("copied")
                    } catch let refusal as StorageCopier.Refusal {
                        outcomes.append("refused: \(refusal.reason)")
                    } catch {
                        outcomes.append("failed: \(error)")
                    }
                }
                // The second waits for the first's lock, then finds its rows: refused, not a
                // unique violation half-way through.
                #expect(outcomes.sorted == ["copied", "refused: targetNotEmpty"])
                let copied = try postgresRows(target.connection, "players")
                #expect(copied == (try sqliteRows(sqlite.database, "players")))
            }
        }
    }

    @Test func aSourceWithPendingMigrationsIsRefusedBeforeTheTargetIsTouched() throws {
        try withTemporaryDirectory { folder in
            // A database as an older release left it: only the first three migrations applied.
            let older = folder.appendingPathComponent("older-migrations", isDirectory: true)
            try FileManager.default.createDirectory(at: older, withIntermediateDirectories: true)
            for name in ["0001_initial.sql", "0002_link_codes.sql", "0003_plays_codes_orders.sql"] {
                try FileManager.default.copyItem(at: productMigrations.appendingPathComponent(name), to: older.appendingPathComponent(name))
            }
            let path = folder.appendingPathComponent("old.sqlite").path
            try Migrator(database: Database(path: path), directory: older).migrate()
            let sqlite = SQLiteStorage(database: try Database(path: path), migrations: productMigrations)
            try withTarget { target, _ in
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .sourceNotMigrated)
                #expect(refusal.message.contains("0004_settings_games_scores, 0005_game_ids_running_games, 0006_order_checkout"))
                #expect(refusal.message.contains("retrorapid migrate"))
                // Not even migrated: the target has no table at all.
                #expect(try postgresDump(target.connection) == [])
            }
            #expect(try sqlite.pendingMigrations().count == 9)
        }
    }

    @Test func aRowPostgreSQLRefusesRollsEverythingBack() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            // Written by hand past SQLite's CHECKs (as a damaged file or an old tool might hold
            // it): a negative score, which PostgreSQL's CHECK on games refuses. `games` comes after
            // players, devices, codes and more, so those are inserted before the failure.
            let handWriter = try Database(path: sqlite.database.path)
            try handWriter.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try handWriter.prepare("""
                INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
                                   started_at, ended_at, duration_ms)
                VALUES (1, 'fast', 3, 1, '10:', -5, 10, 'crash', 0, '2026-01-15T09:00:00Z', '2026-01-15T09:01:00Z', 1000)
                """).execute()
            try withTarget { target, _ in
                var tablesBeforeFailure: Set<String> = []
                let refusal = try #require(throws: StorageCopier.Refusal.self) {
                    try StorageCopier(from: sqlite, to: target, batchRows: 2).copy { tablesBeforeFailure.insert($0.table) }
                }
                #expect(refusal.reason == .writeFailed)
                #expect(refusal.message.contains("games") && refusal.message.contains("check constraint"))
                // Rows of other tables, and earlier games, were inserted before the refused row.
                #expect(tablesBeforeFailure.isSuperset(of: ["players", "devices", "games"]))
                try expectMigratedAndEmpty(target.connection)
            }
        }
    }

    @Test func aRowWhoseParentIsMissingRollsEverythingBack() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            let handWriter = try Database(path: sqlite.database.path)
            try handWriter.execute(sql: "PRAGMA foreign_keys = OFF")
            try handWriter.prepare("INSERT INTO plays (player_id, day, consumed_at) VALUES (9999, '2026-01-15', '2026-01-15T10:00:00Z')").execute()
            try withTarget { target, _ in
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .writeFailed && refusal.message.contains("plays") && refusal.message.contains("foreign key"))
                try expectMigratedAndEmpty(target.connection)
            }
        }
    }

    @Test func aFlagThatIsNeitherZeroNorOneIsRefused() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            let handWriter = try Database(path: sqlite.database.path)
            try handWriter.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try handWriter.execute(sql: "UPDATE running_games SET practice = 2 WHERE public_id = (SELECT min(public_id) FROM running_games)")
            try withTarget { target, _ in
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .unconvertibleValue)
                #expect(refusal.message.contains("running_games.practice holds the integer 2"))
                try expectMigratedAndEmpty(target.connection)
            }
        }
    }

    @Test func anIdNoSequenceCanFollowIsRefusedNotTrappedOn() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            let handWriter = try Database(path: sqlite.database.path)
            try handWriter.execute(sql: "UPDATE game_checkpoints SET id = 9223372036854775807 WHERE id = (SELECT max(id) FROM game_checkpoints)")
            try withTarget { target, _ in
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .unconvertibleValue)
                #expect(refusal.message.contains("game_checkpoints.id holds the id 9223372036854775807"))
                try expectMigratedAndEmpty(target.connection)
            }
        }
    }

    @Test func aCopyThatDoesNotMatchIsRolledBack() throws {
        try withSQLite { sqlite in
            try fillEverything(sqlite)
            try withTarget { target, _ in
                try target.migrate()
                // Triggers that change rows on the way in: one table ends with the same number of
                // rows but other contents, another with a row fewer.
                try target.connection.executeScript("""
                    CREATE FUNCTION shout() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN NEW.display_name := upper(NEW.display_name); RETURN NEW; END; $$;
                    CREATE TRIGGER shout BEFORE INSERT ON players FOR EACH ROW EXECUTE FUNCTION shout();
                    CREATE FUNCTION drop_practice() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN IF NEW.practice THEN RETURN NULL; END IF; RETURN NEW; END; $$;
                    CREATE TRIGGER drop_practice BEFORE INSERT ON running_games FOR EACH ROW EXECUTE FUNCTION drop_practice();
                    """)
                let refusal = try #require(throws: StorageCopier.Refusal.self) { try StorageCopier(from: sqlite, to: target).copy() }
                #expect(refusal.reason == .verificationFailed)
                #expect(refusal.message.contains("players: the same \(try sqliteRows(sqlite.database, "players").count) rows in number, but their contents differ"))
                let running = try sqliteRows(sqlite.database, "running_games").count
                let notPractice = try sqlite.database.prepare("SELECT count(*) FROM running_games WHERE practice = 0").query { $0.int(at: 0) }.first ?? 0
                #expect(notPractice < running)
                #expect(refusal.message.contains("running_games: \(running) rows in SQLite, \(notPractice) in PostgreSQL"))
                try expectMigratedAndEmpty(target.connection)
            }
        }
    }

    // MARK: - The fixture

    /// A SQLite store with a row in every table, written through the SQLite repositories as the
    /// server writes them (and one pre-0005 game without a public id, by hand).
    func fillEverything(_ sqlite: SQLiteStorage) throws {
        let repositories = sqlite.repositories(RepositorySettings(dailyFreePlays: 5))
        let players = repositories.players
        let (ada, adaToken) = try players.createPlayer(displayName: "Ada Zoë Ångström", deviceLabel: "Laptop", now: t0)
        let bob = try players.createPlayer(displayName: "Bob", deviceLabel: "Phone", now: t0.addingTimeInterval(1)).player
        let cy = try players.createPlayer(displayName: nil, deviceLabel: "", now: t0.addingTimeInterval(2)).player
        let adaDevice = try players.authenticate(token: adaToken, now: t0.addingTimeInterval(5))

        // Link codes: one claimed by a second device, which is then revoked; one left unclaimed.
        let issued = try repositories.linkCodes.createCode(for: adaDevice, now: t0.addingTimeInterval(10))
        _ = try repositories.linkCodes.claim(code: issued.code, deviceLabel: "Tablet", now: t0.addingTimeInterval(20))
        _ = try repositories.linkCodes.createCode(for: adaDevice, now: t0.addingTimeInterval(30))
        let tablet = try #require(try players.devices(playerID: ada.id).first { $0.label == "Tablet" })
        try players.revokeDevice(playerID: ada.id, deviceID: tablet.id, now: t0.addingTimeInterval(40))

        // Plays, entitlements, codes and redemptions.
        _ = try repositories.quota.consumePlay(playerID: bob.id, now: t0.addingTimeInterval(50))
        _ = try repositories.entitlements.grantUnlimited(playerID: cy.id, source: .operator, reference: "a gift", now: t0.addingTimeInterval(60))
        try createArcticConf(repositories.codes, maxRedemptions: 100)
        _ = try repositories.codes.create(code: "PRESS2026", kind: .unlock, maxRedemptions: 10, now: t0)
        _ = try repositories.codes.create(code: "OLDCODE", kind: .unlock, now: t0)
        _ = try repositories.codes.disable(code: "OLDCODE", now: t0.addingTimeInterval(70))
        _ = try repositories.codes.redeem(code: "ARCTICCONF", playerID: bob.id, now: t0.addingTimeInterval(80))

        // Orders: one through a checkout, paid by the provider's webhook; one cancelled.
        guard case .new(let orderID, let price) = try repositories.orders.checkoutPlan(playerID: bob.id, now: t0.addingTimeInterval(90)) else {
            Issue.record("expected a new order")
            return
        }
        let checkout = Order.Checkout(sessionID: "cs_test_copy", url: "https://pay.example/cs_test_copy", expiresAt: t0.addingTimeInterval(3600))
        _ = try repositories.orders.createOrder(publicID: orderID, playerID: bob.id, amount: price.amount, discountCode: price.discountCode,
                                                checkout: checkout, now: t0.addingTimeInterval(90))
        _ = try repositories.paymentEvents.record(eventID: "evt_paid", type: PaymentWebhook.sessionCompletedType, paying: orderID,
                                                  now: t0.addingTimeInterval(100))
        _ = try repositories.paymentEvents.record(eventID: "evt_other", type: "customer.created", paying: nil, now: t0.addingTimeInterval(101))
        let cancelled = try repositories.orders.createOrder(playerID: ada.id, now: t0.addingTimeInterval(110))
        _ = try repositories.orders.cancel(publicID: cancelled.publicID, playerID: ada.id, now: t0.addingTimeInterval(120))

        // Settings.
        _ = try repositories.settings.write(playerID: ada.id, json: Data(#"{"cueVolume": 40}"#.utf8), basedOnVersion: 0, now: t0.addingTimeInterval(130))

        // Games on two boards, a practice game, and one with a seed above 2^63.
        let (log, state) = GameFixture.play(seed: 11, level: .fast, dodgeSteps: 60)
        var played = NewGame(publicID: "00000000000000f1", playerID: ada.id, level: .fast, seed: 11, inputLog: log, score: state.score,
                             steps: state.step, endReason: .crash, startedAt: t0.addingTimeInterval(140), endedAt: t0.addingTimeInterval(200),
                             durationMilliseconds: 55_000)
        _ = try repositories.games.record(played)
        played.publicID = "00000000000000f2"
        played.playerID = bob.id
        _ = try repositories.games.record(played)
        var big = scoredGame(player: bob.id, level: .rapid, score: 42, endedAt: t0.addingTimeInterval(300))
        big.publicID = "00000000000000f3"
        big.seed = UInt64.max - 5
        _ = try repositories.games.record(big)
        var practice = scoredGame(player: cy.id, score: 3, endedAt: t0.addingTimeInterval(310))
        practice.publicID = "00000000000000f4"
        practice.practice = true
        _ = try repositories.games.record(practice)

        // A game the server lost by dying: recovered as server_crash, its play refunded.
        try beginRunningGame(repositories.runningGames, "00000000000000c1", player: ada.id, at: t0.addingTimeInterval(400))
        try repositories.runningGames.checkpoint([GameCheckpoint(publicID: "00000000000000c1", steps: 500, movesBefore: 0, moves: [],
                                                                 durationMilliseconds: 1000)], now: t0.addingTimeInterval(401))
        _ = try repositories.runningGames.recoverAll(now: t0.addingTimeInterval(460))

        // Games still running, with checkpoints.
        try checkpointThreeGamesThenCompact(runningGames: repositories.runningGames, games: repositories.games, player: ada.id,
                                            start: t0.addingTimeInterval(500))
        try beginRunningGame(repositories.runningGames, "00000000000000b1", player: ada.id, at: t0.addingTimeInterval(600))
        let (running, _) = RunningPlay.dodge(seed: 7, level: .fast, steps: 20)
        try repositories.runningGames.checkpoint([GameCheckpoint(publicID: "00000000000000b1", log: running, durationMilliseconds: 9000)],
                                                 now: t0.addingTimeInterval(610))
        // A node of a cluster holding one of them (migration 0007).
        // Its game URL and lease (migration 0012 / postgresql 0007) go with it.
        try repositories.cluster.join(nodeID: "node-a", instance: "i-1", now: t0.addingTimeInterval(620), lease: ClusterLease.standard.lease,
                                      gameURL: "wss://a.play.example.com/ws")
        #expect(try repositories.cluster.claim(gameID: "00000000000000b1", nodeID: "node-a", now: t0.addingTimeInterval(621),
                                               lease: ClusterLease.standard.lease) == .claimed)

        // Play together (migration 0008): a room placed on the node, a finished race of two
        // stored games, the day's road with a scored attempt stored and a practice one running.
        #expect(try repositories.roomPlaces.place(code: "K7QXM2", nodeID: "node-a", now: t0.addingTimeInterval(622), lease: ClusterLease.standard.lease))
        try repositories.races.record(NewRace(
            roomCode: "K7QXM2", level: .fast, practice: false, seed: 11, startedAt: t0.addingTimeInterval(140),
            endedAt: t0.addingTimeInterval(200), entries: [
                .init(place: 1, seat: 1, playerID: bob.id, gameID: "00000000000000f2", score: state.score, endReason: .crash),
                .init(place: 2, seat: 0, playerID: ada.id, gameID: "00000000000000f1", score: state.score, endReason: .timeLimit),
            ]))
        let day = UTCDay(containing: t0)
        let dailySeed = try repositories.dailyRoads.seed(level: .cruise, day: day, now: t0.addingTimeInterval(700))
        try repositories.runningGames.begin(RunningGameStart(publicID: "00000000000000d1", playerID: cy.id, level: .cruise, seed: dailySeed,
                                                             practice: false, startedAt: t0.addingTimeInterval(700), road: .daily(day)))
        var daily = scoredGame(player: cy.id, level: .cruise, score: 7, endedAt: t0.addingTimeInterval(760))
        daily.publicID = "00000000000000d1"
        daily.seed = dailySeed
        daily.road = .daily(day)
        _ = try repositories.games.record(daily)
        try repositories.runningGames.begin(RunningGameStart(publicID: "00000000000000d2", playerID: bob.id, level: .cruise, seed: dailySeed,
                                                             practice: true, startedAt: t0.addingTimeInterval(770), road: .daily(day)))

        // Rate limits (migration 0009): a failed guess counted for a player and an address.
        try repositories.rateLimits.take([
            RateLimitKey(action: "code_redeem", scope: "player", key: String(ada.id), count: 5, window: .seconds(600)),
            RateLimitKey(action: "code_redeem", scope: "address", key: "192.0.2.1", count: 30, window: .seconds(600)),
        ], now: t0.addingTimeInterval(780))

        // Operator accounts (migration 0010): one disabled after a reset, so every column holds a value.
        try repositories.operators.add(name: "ada.l", role: .admin, passwordHash: OperatorPassword.hash("first", iterations: 10),
                                       now: t0.addingTimeInterval(790))
        try repositories.operators.resetPassword(name: "ada.l", passwordHash: OperatorPassword.hash("second", iterations: 10),
                                                 now: t0.addingTimeInterval(800))
        try repositories.operators.disable(name: "ada.l", now: t0.addingTimeInterval(810))
        try repositories.operators.add(name: "night-shift", role: .viewer, passwordHash: OperatorPassword.hash("third", iterations: 10),
                                       now: t0.addingTimeInterval(820))

        // The audit log (migration 0011): a copy keeps every entry, in order.
        try repositories.auditLog.append(actor: "cli:ada", action: "operators.add", subject: "ada.l", before: nil, after: "admin",
                                         now: t0.addingTimeInterval(790))
        try repositories.auditLog.append(actor: "cli:ada", action: "codes.disable", subject: "PRESS2026", before: "live", after: "disabled",
                                         now: t0.addingTimeInterval(830))

        // A game stored before games kept their public id (migration 0005): public_id NULL.
        try sqlite.database.prepare("""
            INSERT INTO games (player_id, level, seed, rules_version, input_log, score, steps, end_reason, practice,
                               started_at, ended_at, duration_ms)
            VALUES (?, 'cruise', 5, 1, '8:', 2, 8, 'abandoned', 0, '2026-01-10T09:00:00Z', '2026-01-10T09:01:00Z', 60000)
            """).execute([cy.id])
    }

    // MARK: - Helpers

    /// What each thread's copy came to.
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func append(_ value: String) { lock.withLock { values.append(value) } }
        var sorted: [String] { lock.withLock { values.sorted() } }
    }

    func withSQLite(_ body: (SQLiteStorage) throws -> Void) throws {
        try withTemporaryDirectory { folder in
            let connection = try StorageFactory.open(path: folder.appendingPathComponent("source.sqlite").path,
                                                     migrationsPath: productMigrations.path, ifMissing: .create)
            try connection.migrate()
            try body(try #require(connection as? SQLiteStorage))
        }
    }

    /// A fresh, empty (unmigrated) database on the test server, dropped afterwards.
    func withTarget(_ body: (PostgresStorage, String) throws -> Void) throws {
        try TestPostgres.withDatabase { url in
            let storage = PostgresStorage(connection: try PostgresConnection(conninfo: url),
                                          migrations: productMigrations.appendingPathComponent("postgresql"), location: url)
            try body(storage, url)
        }
    }

    /// The store's own tables: all but SQLite's and schema_migrations.
    func sqliteTables(_ db: Database) throws -> [String] {
        try db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name")
            .query { $0.string(at: 0) }
    }

    /// Every row of a SQLite table as `column=value` cells in column-name order (blobs in hex),
    /// the rows sorted.
    func sqliteRows(_ db: Database, _ table: String) throws -> [[String]] {
        let columns = try db.prepare("SELECT name FROM pragma_table_info(?) ORDER BY name").query([table]) { $0.string(at: 0) }
        let select = columns.map { "CASE typeof(\($0)) WHEN 'blob' THEN lower(hex(\($0))) WHEN 'null' THEN '(null)' ELSE CAST(\($0) AS TEXT) END" }
        return sortedRows(try db.prepare("SELECT \(select.joined(separator: ", ")) FROM \(table)").query { row in
            columns.enumerated().map { "\($1)=\(row.string(at: $0))" }
        })
    }

    /// The same rendering from PostgreSQL: booleans as SQLite's 1 and 0, bytea in hex.
    func postgresRows(_ pg: PostgresConnection, _ table: String) throws -> [[String]] {
        let columns = try pg.execute("""
            SELECT column_name, data_type FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1 ORDER BY column_name COLLATE "C"
            """, [table]).map { ($0.string(at: 0), $0.string(at: 1)) }
        let select = columns.map { name, type -> String in
            switch type {
            case "boolean": return "CASE WHEN \(name) IS NULL THEN '(null)' WHEN \(name) THEN '1' ELSE '0' END"
            case "bytea": return "coalesce(encode(\(name), 'hex'), '(null)')"
            default: return "coalesce(\(name)::text, '(null)')"
            }
        }
        return sortedRows(try pg.execute("SELECT \(select.joined(separator: ", ")) FROM \(table)").map { row in
            columns.enumerated().map { "\($1.0)=\(row.string(at: $0))" }
        })
    }

    func sortedRows(_ rows: [[String]]) -> [[String]] {
        rows.sorted { $0.joined(separator: "\u{1}") < $1.joined(separator: "\u{1}") }
    }

    /// Every table and row of the target, as text.
    func postgresDump(_ pg: PostgresConnection) throws -> [String] {
        let tables = try pg.execute("""
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name
            """).map { $0.string(at: 0) }
        var lines: [String] = []
        for table in tables {
            lines.append("-- \(table)")
            lines += try pg.execute("SELECT t::text FROM \(table) t ORDER BY 1").map { $0.string(at: 0) }
        }
        return lines
    }

    /// After a failed copy: the target is migrated, no table holds a row, and no sequence moved.
    func expectMigratedAndEmpty(_ pg: PostgresConnection) throws {
        let tables = try pg.execute("""
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'
            """).map { $0.string(at: 0) }
        // Every SQLite table, and the slices of cluster nodes' rounds, which only PostgreSQL has.
        #expect(tables.count == 27)
        for table in tables {
            #expect(try pg.execute("SELECT count(*) FROM \(table)").first?.int(at: 0) == 0, "\(table) holds rows after a failed copy")
        }
        #expect(try pg.execute("SELECT nextval(pg_get_serial_sequence('players', 'id'))").first?.int64(at: 0) == 1)
        #expect(try pg.execute("SELECT nextval(pg_get_serial_sequence('games', 'id'))").first?.int64(at: 0) == 1)
    }
}
