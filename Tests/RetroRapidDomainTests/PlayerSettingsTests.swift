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
            "reduceMotion":"system","scoreAnnouncementEvery":25,"speedLevel":"cruise","textSize":100,"theme":"system","tutorialDone":false}
            """)

        var settings = PlayerSettings()
        settings.speedLevel = .rapid
        settings.audioCueMode = .arpeggio
        settings.laneChangeCue = .both
        settings.mono = true
        settings.haptics = .init(enabled: false, crash: true, step: false, move: true)
        settings.announcements = false
        settings.scoreAnnouncementEvery = 5
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

    /// The score is said every 25 points unless the player picks another pace: a document
    /// stored before the field existed reads as 25 too.
    @Test func scoreAnnouncementsDefaultToEvery25Points() throws {
        #expect(PlayerSettings().scoreAnnouncementEvery == 25)
        #expect(try PlayerSettings.decode(json: Data("{}".utf8)).scoreAnnouncementEvery == 25)
        let stored = #"{"announcements":true,"audioCueMode":"chord"}"#
        #expect(try PlayerSettings.decodeStored(Data(stored.utf8), lenient: true).scoreAnnouncementEvery == 25)
    }

    @Test(arguments: [1, 5, 10, 25, 0])
    func everyOfferedScorePaceIsAcceptedAndRoundTrips(_ every: Int) throws {
        let settings = try PlayerSettings.decode(json: Data(#"{"scoreAnnouncementEvery":\#(every)}"#.utf8))
        #expect(settings.scoreAnnouncementEvery == every)
        try settings.validate()
        #expect(try PlayerSettings.decode(json: settings.jsonData()) == settings)
        #expect(String(decoding: settings.jsonData(), as: UTF8.self).contains(#""scoreAnnouncementEvery":\#(every),"#))
    }

    /// Anything but the offered paces is refused naming the field, and a patch that carries one
    /// changes nothing (decode returns no document at all).
    @Test(arguments: ["2", "7", "15", "26", "50", "100", "-1", "-5", "5.5", "\"5\"", "\"every5\"", "null", "true", "[5]"])
    func anyOtherScorePaceIsRefusedByName(_ value: String) throws {
        var stored = PlayerSettings()
        stored.scoreAnnouncementEvery = 10
        let error = #expect(throws: StoreError.self) {
            try PlayerSettings.decode(json: Data(#"{"scoreAnnouncementEvery":\#(value)}"#.utf8), over: stored)
        }
        #expect(error?.code == .invalid)
        #expect(error?.field == "settings.scoreAnnouncementEvery")
        #expect(error?.message.isEmpty == false)
    }

    @Test func aTypedScorePaceOutsideTheChoicesFailsValidationWithTheChoicesNamed() {
        var settings = PlayerSettings()
        settings.scoreAnnouncementEvery = 3
        let error = #expect(throws: StoreError.self) { try settings.validate() }
        #expect(error?.field == "settings.scoreAnnouncementEvery")
        #expect(error?.message == "must be 1, 5, 10 or 25 (points between spoken scores), or 0 for only when asked; got 3")
    }
}
