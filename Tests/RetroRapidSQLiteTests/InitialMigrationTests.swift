import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// The product's real `Migrations/` folder, applied to an empty database file.
@Suite struct InitialMigrationTests {
    /// TestSupport's `migratedDatabase(in:)`, checking on the way that the first migration
    /// applied is the initial one.
    func migratedDatabase(in folder: URL) throws -> Database {
        let db = try openDatabase(in: folder)
        let applied = try Migrator(database: db, directory: productMigrations).migrate()
        #expect(applied.first?.identifier == "0001_initial")
        return db
    }

    func insertDevice(_ db: Database, playerID: Int64, token: [UInt8]) throws {
        try db.prepare("INSERT INTO devices (player_id, token_hash, created_at) VALUES (?, ?, ?)")
            .execute([playerID, token, "2026-01-15T10:00:00Z"])
    }

    @Test func createsStrictPlayersAndDevicesTables() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let strict = try db.prepare("SELECT name FROM pragma_table_list WHERE strict = 1 AND name IN ('players', 'devices') ORDER BY name")
                .query { $0.string(at: 0) }
            #expect(strict == ["devices", "players"])
            let error = #expect(throws: DatabaseError.self) {
                try db.prepare("INSERT INTO players (public_id, display_name, created_at) VALUES (?, ?, ?)").execute([[UInt8]([1, 2]), "Racer", "2026-01-15T10:00:00Z"])
            }
            #expect(error?.extendedCode == 3091)  // SQLITE_CONSTRAINT_DATATYPE: only STRICT refuses a blob here
            #expect(try db.column("SELECT name FROM pragma_index_list('devices') WHERE origin = 'c'") == [.text("devices_by_player")])
        }
    }

    @Test func deletingAPlayerDeletesTheirDevices() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let player = try insertPlayer(db, "p1", createdAt: "2026-01-15T10:00:00Z")
            try insertDevice(db, playerID: player, token: SHA256.hash([1]))
            try insertDevice(db, playerID: player, token: SHA256.hash([2]))
            try db.prepare("DELETE FROM players WHERE id = ?").execute([player])
            #expect(try db.scalar("SELECT count(*) FROM devices") == .integer(0))
        }
    }

    @Test func deviceRulesAreEnforced() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let player = try insertPlayer(db, "p1", createdAt: "2026-01-15T10:00:00Z")
            let token = SHA256.hash(Array("token".utf8))
            try insertDevice(db, playerID: player, token: token)
            #expect(try db.scalar("SELECT label FROM devices") == .text(""))

            let duplicate = #expect(throws: DatabaseError.self) { try insertDevice(db, playerID: player, token: token) }
            #expect(duplicate?.isUniqueViolation == true)
            let noPlayer = #expect(throws: DatabaseError.self) { try insertDevice(db, playerID: 999, token: SHA256.hash([3])) }
            #expect(noPlayer?.isForeignKeyViolation == true)
            let shortHash = #expect(throws: DatabaseError.self) { try insertDevice(db, playerID: player, token: [1, 2, 3]) }
            #expect(shortHash?.isCheckViolation == true)
            let samePublicID = #expect(throws: DatabaseError.self) { _ = try insertPlayer(db, "p1", createdAt: "2026-01-15T10:00:00Z") }
            #expect(samePublicID?.isUniqueViolation == true)
        }
    }
}
