import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing
import RetroRapidSQL

/// Settings that follow the player (docs/API.md) where only SQL can check; the rules are in
/// Tests/RetroRapidStorageTests/SettingsRepositoryContractTests.swift.
@Suite struct SQLiteSettingsRepositoryTests {
    let now = utc("2026-01-15T10:23:45Z")

    // Stays here: a second SQLite connection on the file, and the stored text of updated_at.
    @Test func aFreshConnectionReadsTheCommittedWriteAndItsTime() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            var document = PlayerSettings()
            document.theme = .dark
            let later = now.addingTimeInterval(60)
            _ = try SQLSettingsRepository(executor: SQLiteExecutor(database: db)).write(playerID: player, document: document, basedOnVersion: 0, now: later)

            let reopened = try Database(path: db.path)
            let read = try SQLSettingsRepository(executor: SQLiteExecutor(database: reopened)).settings(playerID: player)
            #expect(read == VersionedSettings(version: 1, settings: document, updatedAt: later))
            #expect(try reopened.scalar("SELECT updated_at FROM player_settings") == .text("2026-01-15T10:24:45Z"))
        }
    }

    // Stays here: the stored text of the document column.
    /// The document is stored as the same JSON the client gets.
    @Test func theStoredDocumentIsTheWireJSON() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            var settings = PlayerSettings()
            settings.language = .es
            _ = try SQLSettingsRepository(executor: SQLiteExecutor(database: db)).write(playerID: player, document: settings, basedOnVersion: 0, now: now)
            #expect(try db.scalar("SELECT document FROM player_settings") == .text(String(decoding: settings.jsonData(), as: UTF8.self)))
            #expect(try db.scalar("SELECT version FROM player_settings") == .integer(1))
        }
    }

    // Stays here: a damaged row, which only SQL can write.
    /// A stored version no write can follow (the next is version + 1) is damage, refused as
    /// unreadable, never a trap: a client's If-Match can name it.
    @Test func aStoredVersionAtTheLargestIntegerIsUnreadableNotTrappedOn() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLSettingsRepository(executor: SQLiteExecutor(database: db))
            _ = try repository.write(playerID: player, document: PlayerSettings(), basedOnVersion: 0, now: now)
            try db.prepare("UPDATE player_settings SET version = ?").execute([Int64.max])
            let error = #expect(throws: StoreError.self) {
                try repository.write(playerID: player, document: PlayerSettings(), basedOnVersion: Int.max, now: now)
            }
            #expect(error?.code == .unreadable)
            #expect(throws: StoreError.self) { try repository.settings(playerID: player) }
            #expect(try db.scalar("SELECT version FROM player_settings") == .integer(Int64.max))
        }
    }

    // Stays here: a player deleted with SQL (the interface deletes no players).
    @Test func deletingAPlayerDeletesTheirSettings() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            _ = try SQLSettingsRepository(executor: SQLiteExecutor(database: db)).write(playerID: player, document: PlayerSettings(), basedOnVersion: 0, now: now)
            try db.prepare("DELETE FROM players WHERE id = ?").execute([player])
            #expect(try db.scalar("SELECT count(*) FROM player_settings") == .integer(0))
        }
    }
}
