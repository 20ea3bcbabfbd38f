import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// PlayerSettings: a value, tested without any storage.
@Suite struct PlayerSettingsTests {
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
}
