import Foundation
import RetroRapidDomain

/// Bytes of a settings JSON body (PUT or PATCH /api/v1/settings, the WebSocket `settings`
/// copy) into `PlayerSettings.decode(json:over:)` (Sources/RetroRapidDomain/PlayerSettings.swift),
/// both as a whole document (over the defaults) and as a patch over a stored document that is
/// not the defaults. Properties:
/// - a refusal is `.invalid` and names a field under `settings`;
/// - what is accepted passes `validate()`, and its JSON (`jsonData()`) decodes back to the
///   same settings and encodes to the same bytes, so a stored document always reads back;
/// - a patch leaves every field it does not name as the stored document had it (checked on
///   the top-level fields: a field absent from the JSON object keeps its stored value).
public enum SettingsFuzzTarget: FuzzTarget {
    public static let name = "settings"
    public static let outcomes: Set<String> = ["accepted", "notJSON", "badField"]

    /// A stored document that differs from the defaults in every top-level field it can.
    static let stored: PlayerSettings = {
        var settings = PlayerSettings()
        settings.speedLevel = .cruise
        settings.audioCueMode = .chord
        settings.laneChangeCue = .both
        settings.cueVolume = 33
        settings.effectsVolume = 44
        settings.mono = true
        settings.haptics = .init(enabled: false, crash: false, step: true, move: false)
        settings.announcements = false
        settings.scoreAnnouncementEvery = 5
        settings.font = .retro
        settings.theme = .dark
        settings.contrast = .high
        settings.reduceMotion = .on
        settings.textSize = 150
        settings.language = .es
        settings.tutorialDone = true
        settings.controls.letterKeys = false
        settings.controls.inputCooldownMs = 120
        settings.controls.scanIntervalMs = 2500
        settings.controls.keyBindings[.left] = "KeyA"
        settings.controls.keyBindings[.right] = "KeyD"
        return settings
    }()

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let data = Data(input)
        let whole = try decodeChecked(data, over: .defaults)
        let patched = try decodeChecked(data, over: stored)
        if let patched, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            try checkUntouchedFields(of: patched, absentFrom: object)
        }
        if whole != nil { return "accepted" }
        return isNotJSON(data) ? "notJSON" : "badField"
    }

    /// The decoded settings, or nil when refused; throws when a property does not hold.
    private static func decodeChecked(_ data: Data, over base: PlayerSettings) throws(PropertyViolation) -> PlayerSettings? {
        let settings: PlayerSettings
        do {
            settings = try PlayerSettings.decode(json: data, over: base)
        } catch {
            // On the bytes: an unknown name the field echoes may start with a combining mark,
            // which joins the dot into one Character and defeats `hasPrefix`.
            guard error.code == .invalid, let field = error.field,
                  field == "settings" || field.utf8.starts(with: "settings.".utf8) else {
                throw PropertyViolation("a refusal that is not .invalid on a settings field: \(error)")
            }
            guard !error.message.isEmpty else { throw PropertyViolation("a refusal without a message: \(error)") }
            return nil
        }
        do {
            try settings.validate()
        } catch {
            throw PropertyViolation("decoded settings that do not validate: \(error)")
        }
        let encoded = settings.jsonData()
        let again: PlayerSettings
        do {
            again = try PlayerSettings.decode(json: encoded, over: base)
        } catch {
            throw PropertyViolation("the JSON of accepted settings is refused: \(error)")
        }
        guard again == settings else { throw PropertyViolation("the JSON of accepted settings decodes to other settings") }
        guard again.jsonData() == encoded else { throw PropertyViolation("the JSON of accepted settings is not stable") }
        return settings
    }

    private static func checkUntouchedFields(of patched: PlayerSettings, absentFrom object: [String: Any]) throws(PropertyViolation) {
        func keep<Value: Equatable>(_ field: String, _ path: KeyPath<PlayerSettings, Value>) throws(PropertyViolation) {
            if object[field] == nil, patched[keyPath: path] != stored[keyPath: path] {
                throw PropertyViolation("a patch without \(field) changed it")
            }
        }
        try keep("speedLevel", \.speedLevel)
        try keep("audioCueMode", \.audioCueMode)
        try keep("laneChangeCue", \.laneChangeCue)
        try keep("cueVolume", \.cueVolume)
        try keep("effectsVolume", \.effectsVolume)
        try keep("mono", \.mono)
        try keep("haptics", \.haptics)
        try keep("announcements", \.announcements)
        try keep("scoreAnnouncementEvery", \.scoreAnnouncementEvery)
        try keep("font", \.font)
        try keep("theme", \.theme)
        try keep("contrast", \.contrast)
        try keep("reduceMotion", \.reduceMotion)
        try keep("textSize", \.textSize)
        try keep("language", \.language)
        try keep("tutorialDone", \.tutorialDone)
        try keep("controls", \.controls)
    }

    private static func isNotJSON(_ data: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) == nil
    }
}
