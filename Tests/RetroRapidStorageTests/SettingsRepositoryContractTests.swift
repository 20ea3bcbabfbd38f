import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import RetroRapidRules
import Testing

/// The contract of `SettingsRepository`, run against every backend in `StorageBackends.all`.
@Suite struct SettingsRepositoryContractTests {
    let now = utc("2026-01-15T10:23:45Z")

    @Test(arguments: StorageBackends.all) func anUnknownPlayerIsNotFoundForReadsAndWrites(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repository = store.repositories().settings
            let read = #expect(throws: StoreError.self) { try repository.settings(playerID: 42) }
            #expect(read?.code == .notFound)
            let before = try store.dump()
            let write = #expect(throws: StoreError.self) {
                try repository.write(playerID: 42, document: PlayerSettings(), basedOnVersion: 0, now: now)
            }
            #expect(write?.code == .notFound)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aStaleWriteIsRefusedWithTheCurrentDocumentAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            var phone = PlayerSettings()
            phone.audioCueMode = .chord
            _ = try repository.write(playerID: player, document: phone, basedOnVersion: 0, now: now)
            let current = VersionedSettings(version: 1, settings: phone, updatedAt: now)
            let before = try store.dump()

            // The laptop still holds version 0 (the defaults) and changes the font.
            var laptop = PlayerSettings()
            laptop.font = .retro
            let stale = try repository.write(playerID: player, document: laptop, basedOnVersion: 0, now: now)
            #expect(stale == .stale(current: current))
            // A version from the future is as stale as one from the past.
            #expect(try repository.write(playerID: player, document: laptop, basedOnVersion: 7, now: now) == .stale(current: current))
            // So is a patch.
            let patch = try repository.patch(playerID: player, json: Data(#"{"font":"retro"}"#.utf8), basedOnVersion: 0, now: now)
            #expect(patch == .stale(current: current))
            #expect(try store.dump() == before)
            #expect(try repository.settings(playerID: player) == current)
        }
    }

    @Test(arguments: StorageBackends.all) func aNegativeBaseVersionIsInvalid(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let error = #expect(throws: StoreError.self) {
                try store.repositories().settings.write(playerID: player, document: PlayerSettings(), basedOnVersion: -1, now: now)
            }
            #expect(error?.code == .invalid)
            #expect(error?.field == "basedOnVersion")
        }
    }

    @Test(arguments: StorageBackends.all) func theEdgesOfEveryRangeAreAccepted(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            let low = #"{"cueVolume":0,"effectsVolume":0,"textSize":100,"controls":{"inputCooldownMs":0,"scanIntervalMs":500}}"#
            let high = #"{"cueVolume":100,"effectsVolume":100,"textSize":200,"controls":{"inputCooldownMs":500,"scanIntervalMs":5000}}"#
            guard case .written(let first) = try repository.write(playerID: player, json: Data(low.utf8), basedOnVersion: 0, now: now),
                  case .written(let second) = try repository.write(playerID: player, json: Data(high.utf8), basedOnVersion: 1, now: now)
            else { Issue.record("a write at the edge of a range was refused"); return }
            #expect(first.settings.controls.scanIntervalMs == 500)
            #expect(second.settings.controls.scanIntervalMs == 5000)
            #expect(second.settings.textSize == 200)
        }
    }

    @Test(arguments: StorageBackends.all) func aPatchChangesOnlyTheFieldsItNames(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            var stored = PlayerSettings()
            stored.cueVolume = 30
            stored.haptics.step = false
            stored.controls.keyBindings[.repeatCue] = "KeyR"
            _ = try repository.write(playerID: player, document: stored, basedOnVersion: 0, now: now)

            let patch = #"{"theme":"dark","haptics":{"crash":false},"controls":{"keyBindings":{"pause":"Space"}}}"#
            let result = try repository.patch(playerID: player, json: Data(patch.utf8), basedOnVersion: 1, now: now)
            var expected = stored
            expected.theme = .dark
            expected.haptics.crash = false
            expected.controls.keyBindings[.pause] = "Space"
            #expect(result == .written(VersionedSettings(version: 2, settings: expected, updatedAt: now)))
            #expect(try repository.settings(playerID: player).settings == expected)
        }
    }

    @Test(arguments: StorageBackends.all) func aPatchClashingWithAStoredBindingIsRefused(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            var stored = PlayerSettings()
            stored.controls.keyBindings[.repeatCue] = "KeyJ"
            _ = try repository.write(playerID: player, document: stored, basedOnVersion: 0, now: now)
            let before = try store.dump()
            // Valid over the defaults, but the stored document already gives KeyJ to repeatCue.
            let error = #expect(throws: StoreError.self) {
                try repository.patch(playerID: player, json: Data(#"{"controls":{"keyBindings":{"pause":"KeyJ"}}}"#.utf8), basedOnVersion: 1, now: now)
            }
            #expect(error?.field == "settings.controls.keyBindings.repeatCue")
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aWholeDocumentInJSONFillsWhatItLeavesOutWithDefaults(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            var stored = PlayerSettings()
            stored.cueVolume = 30
            _ = try repository.write(playerID: player, document: stored, basedOnVersion: 0, now: now)
            let result = try repository.write(playerID: player, json: Data(#"{"language":"es"}"#.utf8), basedOnVersion: 1, now: now)
            var expected = PlayerSettings()
            expected.language = .es
            #expect(result == .written(VersionedSettings(version: 2, settings: expected, updatedAt: now)))
        }
    }

    @Test(arguments: StorageBackends.all) func aPlayerWithNothingStoredGetsTheDefaultsAtVersionZero(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let before = try store.dump()
            let stored = try store.repositories().settings.settings(playerID: player)
            #expect(stored.version == 0)
            #expect(stored.updatedAt == nil)
            #expect(stored.settings == PlayerSettings())
            #expect(stored.settings.speedLevel == .cruise)
            #expect(stored.settings.font == .readable)
            #expect(stored.settings.controls.keyBindings[.left] == "ArrowLeft")
            // Reading the defaults stores nothing.
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func everyWriteIncrementsTheVersionAndIsReadBack(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
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

            let read = try repository.settings(playerID: player)
            #expect(read == VersionedSettings(version: 3, settings: document, updatedAt: later))
            #expect(read.updatedAt == utc("2026-01-15T10:24:45Z"))
        }
    }

    /// Each bad field, sent as a whole document and as a patch: refused as invalid, naming
    /// the field, with the stored document untouched.
    @Test(arguments: StorageBackends.all, [
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
        (#"{"scoreAnnouncementEvery":7}"#, "settings.scoreAnnouncementEvery"),
        (#"{"scoreAnnouncementEvery":-25}"#, "settings.scoreAnnouncementEvery"),
        (#"{"scoreAnnouncementEvery":"10"}"#, "settings.scoreAnnouncementEvery"),
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
    func anInvalidFieldIsRefusedByNameAndChangesNothing(_ backend: BackendUnderTest, _ input: (json: String, field: String)) throws {
        let (json, field) = input
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            var stored = PlayerSettings()
            stored.cueVolume = 42
            _ = try repository.write(playerID: player, document: stored, basedOnVersion: 0, now: now)
            let before = try store.dump()

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

            #expect(try store.dump() == before)
            #expect(try repository.settings(playerID: player).version == 1)
        }
    }

    /// The typed path validates too: the server may build a document in Swift.
    @Test(arguments: StorageBackends.all) func anInvalidTypedDocumentIsRefusedByName(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let player = try store.addPlayer("p-1")
            let repository = store.repositories().settings
            var cases: [(PlayerSettings, String)] = []
            var settings = PlayerSettings()
            settings.effectsVolume = 101
            cases.append((settings, "settings.effectsVolume"))
            settings = PlayerSettings()
            settings.textSize = 250
            cases.append((settings, "settings.textSize"))
            settings = PlayerSettings()
            settings.scoreAnnouncementEvery = 50
            cases.append((settings, "settings.scoreAnnouncementEvery"))
            settings = PlayerSettings()
            settings.controls.inputCooldownMs = -5
            cases.append((settings, "settings.controls.inputCooldownMs"))
            settings = PlayerSettings()
            settings.controls.keyBindings[.announceScore] = nil
            cases.append((settings, "settings.controls.keyBindings.announceScore"))
            settings = PlayerSettings()
            settings.controls.keyBindings[.right] = "ArrowLeft"
            cases.append((settings, "settings.controls.keyBindings.right"))
            let before = try store.dump()
            for (document, field) in cases {
                let error = #expect(throws: StoreError.self) {
                    try repository.write(playerID: player, document: document, basedOnVersion: 0, now: now)
                }
                #expect(error?.code == .invalid)
                #expect(error?.field == field)
            }
            // No document stored: everything as before, still the defaults at version 0.
            #expect(try store.dump() == before)
            #expect(try repository.settings(playerID: player).version == 0)
        }
    }
}
