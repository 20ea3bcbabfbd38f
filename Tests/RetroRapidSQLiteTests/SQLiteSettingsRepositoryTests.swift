import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

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
            _ = try SQLiteSettingsRepository(database: db).write(playerID: player, document: document, basedOnVersion: 0, now: later)

            let reopened = try Database(path: db.path)
            let read = try SQLiteSettingsRepository(database: reopened).settings(playerID: player)
            #expect(read == VersionedSettings(version: 1, settings: document, updatedAt: later))
            #expect(try reopened.scalar("SELECT updated_at FROM player_settings") == .text("2026-01-15T10:24:45Z"))
        }
    }

    // Stays here (as the one below): a PlayerSettings value test that touches no storage.
    @Test func letterKeysOffFreesAAndDForBindings() throws {
        var settings = PlayerSettings()
        settings.controls.letterKeys = false
        settings.controls.keyBindings[.pause] = "KeyA"
        try settings.validate()
        settings.controls.letterKeys = true
        #expect(throws: StoreError.self) { try settings.validate() }
    }

    /// The wire format is pinned: keys sorted, every field present, the same bytes every time.
    @Test func jsonHasSortedKeysAndRoundTrips() throws {
        let defaults = String(decoding: PlayerSettings().jsonData(), as: UTF8.self)
        #expect(defaults == """
            {"announcements":true,"audioCueMode":"lanePulse","contrast":"standard",\
            "controls":{"gamepad":true,"inputCooldownMs":0,"keyBindings":{"announceScore":"KeyS",\
            "left":"ArrowLeft","pause":"KeyP","repeatCue":"KeyC","right":"ArrowRight"},"keyboard":true,\
            "letterKeys":true,"oneSwitch":false,"scanIntervalMs":1500,"swipe":true,"switchMode":"dodge","touch":true,\
            "wheel":true},\
            "cueVolume":80,"effectsVolume":80,"font":"readable","haptics":{"crash":true,"enabled":true,\
            "move":true,"step":true},"laneChangeCue":"confirmation","language":"en","mono":false,\
            "reduceMotion":"system","speedLevel":"cruise","textSize":100,"theme":"system","tutorialDone":false}
            """)

        var settings = PlayerSettings()
        settings.speedLevel = .rapid
        settings.audioCueMode = .arpeggio
        settings.laneChangeCue = .both
        settings.mono = true
        settings.haptics = .init(enabled: false, crash: true, step: false, move: true)
        settings.announcements = false
        settings.font = .retro
        settings.contrast = .high
        settings.reduceMotion = .on
        settings.textSize = 150
        settings.tutorialDone = true
        settings.controls.swipe = false
        settings.controls.scanIntervalMs = 2500
        settings.controls.switchMode = .scan
        settings.controls.keyBindings[.left] = "KeyJ"
        let data = settings.jsonData()
        #expect(try PlayerSettings.decode(json: data) == settings)
        #expect(settings.jsonData() == data)

        let versioned = VersionedSettings(version: 3, settings: PlayerSettings(), updatedAt: utc("2026-01-15T10:23:45Z"))
        let text = String(decoding: versioned.jsonData(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"settings":{"announcements":true"#))
        #expect(text.hasSuffix(#"},"updatedAt":"2026-01-15T10:23:45Z","version":3}"#))
        let never = String(decoding: VersionedSettings(version: 0, settings: PlayerSettings(), updatedAt: nil).jsonData(), as: UTF8.self)
        #expect(never.hasSuffix(#""updatedAt":null,"version":0}"#))
    }

    // Stays here: the stored text of the document column.
    /// The document is stored as the same JSON the client gets.
    @Test func theStoredDocumentIsTheWireJSON() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            var settings = PlayerSettings()
            settings.language = .es
            _ = try SQLiteSettingsRepository(database: db).write(playerID: player, document: settings, basedOnVersion: 0, now: now)
            #expect(try db.scalar("SELECT document FROM player_settings") == .text(String(decoding: settings.jsonData(), as: UTF8.self)))
            #expect(try db.scalar("SELECT version FROM player_settings") == .integer(1))
        }
    }

    // Stays here: a player deleted with SQL (the interface deletes no players).
    @Test func deletingAPlayerDeletesTheirSettings() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            _ = try SQLiteSettingsRepository(database: db).write(playerID: player, document: PlayerSettings(), basedOnVersion: 0, now: now)
            try db.prepare("DELETE FROM players WHERE id = ?").execute([player])
            #expect(try db.scalar("SELECT count(*) FROM player_settings") == .integer(0))
        }
    }
}
