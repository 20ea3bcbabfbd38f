import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Settings that follow the player (docs/API.md), against a real database file migrated with
/// the product's own `Migrations/` folder.
@Suite struct SQLiteSettingsRepositoryTests {
    let now = utc("2026-01-15T10:23:45Z")

    @Test func aPlayerWithNothingStoredGetsTheDefaultsAtVersionZero() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            let stored = try SQLiteSettingsRepository(database: db).settings(playerID: player)
            #expect(stored.version == 0)
            #expect(stored.updatedAt == nil)
            #expect(stored.settings == PlayerSettings())
            #expect(stored.settings.speedLevel == .cruise)
            #expect(stored.settings.font == .readable)
            #expect(stored.settings.controls.keyBindings[.left] == "ArrowLeft")
            #expect(try db.scalar("SELECT count(*) FROM player_settings") == .integer(0))
        }
    }

    @Test func everyWriteIncrementsTheVersionAndIsReadBack() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteSettingsRepository(database: db)
            var document = PlayerSettings()
            document.cueVolume = 35
            document.controls.oneSwitch = true
            let first = try repository.write(playerID: player, document: document, basedOnVersion: 0, now: now)
            #expect(first == .written(VersionedSettings(version: 1, settings: document, updatedAt: now)))

            document.theme = .dark
            let later = now.addingTimeInterval(60)
            let second = try repository.write(playerID: player, document: document, basedOnVersion: 1, now: later)
            #expect(second == .written(VersionedSettings(version: 2, settings: document, updatedAt: later)))
            // Writing the same document again is still a write.
            let third = try repository.write(playerID: player, document: document, basedOnVersion: 2, now: later)
            guard case .written(let stored) = third else { Issue.record("expected a write, got \(third)"); return }
            #expect(stored.version == 3)

            // A fresh connection reads what was committed.
            let reopened = try Database(path: db.path)
            let read = try SQLiteSettingsRepository(database: reopened).settings(playerID: player)
            #expect(read == VersionedSettings(version: 3, settings: document, updatedAt: later))
            #expect(try reopened.scalar("SELECT updated_at FROM player_settings") == .text("2026-01-15T10:24:45Z"))
        }
    }

    /// Each bad field, sent as a whole document and as a patch: refused as invalid, naming
    /// the field, with the stored document untouched.
    @Test(arguments: [
        (#"{"speedLevel":"easy"}"#, "settings.speedLevel"),
        (#"{"audioCueMode":"beep"}"#, "settings.audioCueMode"),
        (#"{"laneChangeCue":"loud"}"#, "settings.laneChangeCue"),
        (#"{"cueVolume":101}"#, "settings.cueVolume"),
        (#"{"cueVolume":-1}"#, "settings.cueVolume"),
        (#"{"cueVolume":50.5}"#, "settings.cueVolume"),
        (#"{"cueVolume":"50"}"#, "settings.cueVolume"),
        (#"{"effectsVolume":1000}"#, "settings.effectsVolume"),
        (#"{"mono":1}"#, "settings.mono"),
        (#"{"haptics":true}"#, "settings.haptics"),
        (#"{"haptics":{"crash":"yes"}}"#, "settings.haptics.crash"),
        (#"{"haptics":{"buzz":true}}"#, "settings.haptics.buzz"),
        (#"{"haptics":{"enabled":null}}"#, "settings.haptics.enabled"),
        (#"{"announcements":null}"#, "settings.announcements"),
        (#"{"font":"comic"}"#, "settings.font"),
        (#"{"theme":"sepia"}"#, "settings.theme"),
        (#"{"contrast":"low"}"#, "settings.contrast"),
        (#"{"reduceMotion":"maybe"}"#, "settings.reduceMotion"),
        (#"{"textSize":99}"#, "settings.textSize"),
        (#"{"textSize":201}"#, "settings.textSize"),
        (#"{"language":"fr"}"#, "settings.language"),
        (#"{"tutorialDone":"true"}"#, "settings.tutorialDone"),
        (#"{"controls":{"touch":"on"}}"#, "settings.controls.touch"),
        (#"{"controls":{"inputCooldownMs":501}}"#, "settings.controls.inputCooldownMs"),
        (#"{"controls":{"scanIntervalMs":499}}"#, "settings.controls.scanIntervalMs"),
        (#"{"controls":{"scanIntervalMs":5001}}"#, "settings.controls.scanIntervalMs"),
        (#"{"controls":{"oneSwitch":0}}"#, "settings.controls.oneSwitch"),
        (#"{"controls":{"switchMode":"auto"}}"#, "settings.controls.switchMode"),
        (#"{"controls":{"switchMode":true}}"#, "settings.controls.switchMode"),
        (#"{"controls":{"joystick":true}}"#, "settings.controls.joystick"),
        (#"{"controls":{"keyBindings":{"jump":"Space"}}}"#, "settings.controls.keyBindings.jump"),
        (#"{"controls":{"keyBindings":{"pause":"Tab"}}}"#, "settings.controls.keyBindings.pause"),
        (#"{"controls":{"keyBindings":{"pause":"keyp"}}}"#, "settings.controls.keyBindings.pause"),
        (#"{"controls":{"keyBindings":{"pause":7}}}"#, "settings.controls.keyBindings.pause"),
        (#"{"controls":{"keyBindings":{"pause":"ArrowLeft"}}}"#, "settings.controls.keyBindings.pause"),
        (#"{"controls":{"keyBindings":{"repeatCue":"KeyD"}}}"#, "settings.controls.keyBindings.repeatCue"),
        (#"{"colour":"red"}"#, "settings.colour"),
        (#"{"cueVolume":80"#, "settings"),
        (#"["cueVolume"]"#, "settings"),
    ])
    func anInvalidFieldIsRefusedByNameAndChangesNothing(json: String, field: String) throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteSettingsRepository(database: db)
            var stored = PlayerSettings()
            stored.cueVolume = 42
            _ = try repository.write(playerID: player, document: stored, basedOnVersion: 0, now: now)
            let before = try db.dump()

            let whole = #expect(throws: StoreError.self) {
                try repository.write(playerID: player, json: Data(json.utf8), basedOnVersion: 1, now: now)
            }
            #expect(whole?.code == .invalid)
            #expect(whole?.field == field)
            #expect(whole?.message.isEmpty == false)

            let patch = #expect(throws: StoreError.self) {
                try repository.patch(playerID: player, json: Data(json.utf8), basedOnVersion: 1, now: now)
            }
            #expect(patch?.code == .invalid)
            #expect(patch?.field == field)

            #expect(try db.dump() == before)
            #expect(try repository.settings(playerID: player).version == 1)
        }
    }

    /// The typed path validates too: the server may build a document in Swift.
    @Test func anInvalidTypedDocumentIsRefusedByName() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            let repository = SQLiteSettingsRepository(database: db)
            var cases: [(PlayerSettings, String)] = []
            var settings = PlayerSettings()
            settings.effectsVolume = 101
            cases.append((settings, "settings.effectsVolume"))
            settings = PlayerSettings()
            settings.textSize = 250
            cases.append((settings, "settings.textSize"))
            settings = PlayerSettings()
            settings.controls.inputCooldownMs = -5
            cases.append((settings, "settings.controls.inputCooldownMs"))
            settings = PlayerSettings()
            settings.controls.keyBindings[.announceScore] = nil
            cases.append((settings, "settings.controls.keyBindings.announceScore"))
            settings = PlayerSettings()
            settings.controls.keyBindings[.right] = "ArrowLeft"
            cases.append((settings, "settings.controls.keyBindings.right"))
            for (document, field) in cases {
                let error = #expect(throws: StoreError.self) {
                    try repository.write(playerID: player, document: document, basedOnVersion: 0, now: now)
                }
                #expect(error?.code == .invalid)
                #expect(error?.field == field)
            }
            #expect(try db.scalar("SELECT count(*) FROM player_settings") == .integer(0))
        }
    }

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

    @Test func deletingAPlayerDeletesTheirSettings() throws {
        try withMigratedDatabase(named: "settings.sqlite") { db in
            let player = try insertPlayer(db)
            _ = try SQLiteSettingsRepository(database: db).write(playerID: player, document: PlayerSettings(), basedOnVersion: 0, now: now)
            try db.prepare("DELETE FROM players WHERE id = ?").execute([player])
            #expect(try db.scalar("SELECT count(*) FROM player_settings") == .integer(0))
        }
    }
}
