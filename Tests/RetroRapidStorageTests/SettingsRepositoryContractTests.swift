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
}
