import Foundation
import RetroRapidRules

/// One player's settings: the typed document that follows them from device to device
/// (docs/API.md, "Settings"). The client turns the game's semantic events
/// into sound, haptics, visuals and speech according to it.
///
/// A plain value: build it, change it, then hand it to ``SettingsRepository``, which validates
/// every field (``validate()``) before storing it. Over HTTP and WebSocket it travels as JSON
/// with sorted keys (``jsonData()``); JSON comes back in through ``decode(json:over:)``, which
/// refuses unknown fields, wrong types and values out of range, naming the field at fault
/// (`settings.controls.scanIntervalMs`). A field missing from the JSON keeps the value of the
/// document it is decoded over: the defaults for a whole document, the stored document for a
/// patch.
public struct PlayerSettings: Equatable, Sendable {
    // MARK: Game and sound

    /// The level a new game starts at.
    /// Cruise, the gentlest: a new player should not start on a faster level than the tutorial
    /// practises at (Web/js/settings/defaults.js holds the same default).
    public var speedLevel: SpeedLevel = .cruise
    /// How the safe-lane cue sounds (C, E, G for left, middle, right).
    public var audioCueMode: AudioCueMode = .lanePulse
    /// What the player hears after moving lanes.
    public var laneChangeCue: LaneChangeCue = .confirmation
    /// Loudness of the lane cues, 0–100.
    public var cueVolume = 80
    /// Loudness of the other sounds (crash, bump, speed-up), 0–100.
    public var effectsVolume = 80
    /// Both ears get every sound (no left/centre/right panning): for one-sided hearing.
    public var mono = false

    // MARK: Feedback and reading

    public var haptics = Haptics()
    /// Screen-reader announcements (ARIA live regions) for speed-ups, crashes and scores.
    public var announcements = true
    /// How often a race says the score by itself, with announcements on: each time it reaches a
    /// multiple of this many points, or never when 0 (the status key says it on request either
    /// way). One of ``scoreAnnouncementChoices``; 25 is the pace the client always had.
    ///
    /// A number of points rather than a named choice such as ``audioCueMode``: it is the count
    /// the client divides the score by, it reads as what it means (`5` is every 5 points), and
    /// another pace would be one more number, not a new name. Only the listed counts are
    /// accepted, as a choice's names are, so what the settings page offers is the whole set.
    public var scoreAnnouncementEvery = 25

    // MARK: Appearance

    public var font: Font = .readable
    public var theme: Theme = .system
    public var contrast: Contrast = .standard
    public var reduceMotion: ReduceMotion = .system
    /// Text size in percent of the page's base size, 100–200.
    public var textSize = 100
    public var language: Language = .en

    // MARK: Progress and input

    public var tutorialDone = false
    public var controls = Controls()

    /// The defaults: what a player who never saved anything gets.
    public init() {}

    /// The defaults (same as `PlayerSettings()`), named for readability at call sites.
    public static let defaults = PlayerSettings()

    // MARK: - Choices

    /// docs/GAME_RULES.md: a note for each safe lane (silence for an unsafe one), the safe notes in
    /// sequence, the safe notes together, or no cue.
    public enum AudioCueMode: String, CaseIterable, Sendable, Codable {
        case lanePulse, arpeggio, chord, off
    }

    /// What a press of the one switch does; see ``Controls/switchMode``.
    public enum SwitchMode: String, CaseIterable, Sendable, Codable {
        case dodge, scan
    }

    /// docs/API.md, "Settings": the new lane's note, a safe/unsafe sound, both, or nothing.
    public enum LaneChangeCue: String, CaseIterable, Sendable, Codable {
        case confirmation, success, both, off
    }

    /// The retro LCD font, or a readable one.
    public enum Font: String, CaseIterable, Sendable, Codable {
        case retro, readable
    }

    /// `system` follows the device's light/dark preference.
    public enum Theme: String, CaseIterable, Sendable, Codable {
        case system, light, dark
    }

    public enum Contrast: String, CaseIterable, Sendable, Codable {
        case standard, high
    }

    /// `system` follows the device's reduced-motion preference.
    public enum ReduceMotion: String, CaseIterable, Sendable, Codable {
        case system, on, off
    }

    /// The languages the client is translated into.
    public enum Language: String, CaseIterable, Sendable, Codable {
        case en, es
    }

    /// Vibration where the device has it: a master switch and one per moment (docs/PROTOCOL.md).
    public struct Haptics: Equatable, Sendable {
        public var enabled = true
        public var crash = true
        public var step = true
        public var move = true

        public init(enabled: Bool = true, crash: Bool = true, step: Bool = true, move: Bool = true) {
            self.enabled = enabled
            self.crash = crash
            self.step = step
            self.move = move
        }
    }

    /// Which inputs drive the game (docs/API.md, "Settings"), and how.
    public struct Controls: Equatable, Sendable {
        /// The bound keys (``keyBindings``): arrows by default.
        public var keyboard = true
        /// A and D also move left and right.
        public var letterKeys = true
        /// Tapping the left or right half of the screen.
        public var touch = true
        public var swipe = true
        /// The mouse wheel, in place of the watch's Digital Crown.
        public var wheel = true
        public var gamepad = true
        /// Inputs closer together than this are ignored, 0–500 ms: for tremor.
        public var inputCooldownMs = 0
        /// One-switch mode: the game scans the lanes and the one switch picks one.
        public var oneSwitch = false
        /// How long the one-switch scan stays on each lane, 500–5000 ms.
        public var scanIntervalMs = 1500
        /// What the one switch does (docs/GAME_RULES.md, "One-switch play"): `dodge` moves to
        /// the nearest lane the last cue called safe, so the choice comes every step; `scan`
        /// picks what a timed highlight (``scanIntervalMs``) shows.
        public var switchMode: SwitchMode = .dodge
        /// The key (a browser `KeyboardEvent.code`) for each action. Every action has one, no
        /// two actions share one; see ``KeyAction`` and ``allowedKeys``.
        public var keyBindings: [KeyAction: String] = KeyAction.defaultBindings

        public init() {}
    }

    /// What a key can be bound to.
    public enum KeyAction: String, CaseIterable, Sendable, Codable, Comparable {
        case left, right, pause, repeatCue, announceScore

        public static func < (a: KeyAction, b: KeyAction) -> Bool { a.rawValue < b.rawValue }

        public static let defaultBindings: [KeyAction: String] = [
            .left: "ArrowLeft", .right: "ArrowRight", .pause: "KeyP", .repeatCue: "KeyC", .announceScore: "KeyS",
        ]
    }

    /// The `KeyboardEvent.code` values a binding may use: letters, digits, arrows and the
    /// plain punctuation and editing keys. Left out on purpose: Tab and Shift+Tab move focus
    /// (binding them would trap keyboard users, WCAG 2.1.2); Insert, CapsLock and the other
    /// modifiers are screen readers' own modifier keys; F-keys belong to the browser.
    public static let allowedKeys: Set<String> = {
        var keys: Set<String> = [
            "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Space", "Enter", "NumpadEnter", "Escape",
            "Backspace", "Home", "End", "PageUp", "PageDown", "Comma", "Period", "Slash", "Semicolon",
            "Quote", "BracketLeft", "BracketRight", "Minus", "Equal", "Backslash", "Backquote",
        ]
        for letter in UInt8(ascii: "A")...UInt8(ascii: "Z") { keys.insert("Key" + String(UnicodeScalar(letter))) }
        for digit in 0...9 { keys.insert("Digit\(digit)"); keys.insert("Numpad\(digit)") }
        return keys
    }()

    /// Inclusive ranges of the numeric fields.
    public static let volumeRange = 0...100
    public static let textSizeRange = 100...200
    public static let inputCooldownRange = 0...500
    public static let scanIntervalRange = 500...5000
    /// The values ``scoreAnnouncementEvery`` may take: every point, 5, 10, 25, or 0 for only
    /// on request.
    public static let scoreAnnouncementChoices = [1, 5, 10, 25, 0]

    // MARK: - Validation

    /// Checks every field; throws `StoreError.invalid` naming the first field at fault
    /// (`settings.cueVolume`), in document order. Enums are valid by construction here; JSON
    /// with an unknown value is refused earlier, by ``decode(json:over:)``.
    public func validate() throws(StoreError) {
        try Self.check(cueVolume, in: Self.volumeRange, "cueVolume", unit: "")
        try Self.check(effectsVolume, in: Self.volumeRange, "effectsVolume", unit: "")
        guard Self.scoreAnnouncementChoices.contains(scoreAnnouncementEvery) else {
            throw StoreError(.invalid, "must be 1, 5, 10 or 25 (points between spoken scores), or 0 for only when asked; got \(scoreAnnouncementEvery)",
                             field: "settings.scoreAnnouncementEvery")
        }
        try Self.check(textSize, in: Self.textSizeRange, "textSize", unit: " percent")
        try Self.check(controls.inputCooldownMs, in: Self.inputCooldownRange, "controls.inputCooldownMs", unit: " ms")
        try Self.check(controls.scanIntervalMs, in: Self.scanIntervalRange, "controls.scanIntervalMs", unit: " ms")
        var owners: [String: KeyAction] = [:]
        for action in KeyAction.allCases {
            let field = "settings.controls.keyBindings.\(action.rawValue)"
            guard let key = controls.keyBindings[action] else {
                throw StoreError(.invalid, "every action needs a key; \(action.rawValue) has none", field: field)
            }
            guard Self.allowedKeys.contains(key) else {
                let hint = key == "Tab" ? " (Tab moves focus and cannot be bound)" : ""
                throw StoreError(.invalid, "'\(key)' is not a key that can be bound\(hint); use a KeyboardEvent.code such as ArrowLeft, KeyJ, Digit1 or Space", field: field)
            }
            if let other = owners[key] {
                throw StoreError(.invalid, "\(key) is already bound to \(other.rawValue); each key does one thing", field: field)
            }
            if controls.letterKeys, key == "KeyA" || key == "KeyD" {
                throw StoreError(.invalid, "\(key) moves the car while letter keys (A/D) are on; choose another key or turn letter keys off", field: field)
            }
            owners[key] = action
        }
    }

    private static func check(_ value: Int, in range: ClosedRange<Int>, _ name: String, unit: String) throws(StoreError) {
        guard range.contains(value) else {
            throw StoreError(.invalid, "must be from \(range.lowerBound) to \(range.upperBound)\(unit), got \(value)", field: "settings.\(name)")
        }
    }
}

// MARK: - JSON

extension PlayerSettings {
    /// The document as JSON, keys sorted so the same settings always give the same bytes.
    public func jsonData() -> Data {
        do {
            return try SettingsJSON.encoder.encode(self)
        } catch {
            // Only strings, integers and booleans: JSONEncoder has nothing to refuse.
            preconditionFailure("PlayerSettings failed to encode: \(error)")
        }
    }

    /// Reads a settings JSON object. Fields it leaves out keep their value in `base` (the
    /// defaults for a whole document, the current document for a patch); unknown fields,
    /// wrong types, unknown choices and out-of-range values are refused with
    /// `StoreError.invalid` naming the field (`settings.haptics.crash`). The result is valid.
    public static func decode(json: Data, over base: PlayerSettings = .defaults) throws(StoreError) -> PlayerSettings {
        let settings = try SettingsJSON.decode(json, over: base, lenient: false)
        try settings.validate()
        return settings
    }
}

extension PlayerSettings: Codable {
    /// Every field of the document, declared once: its JSON name, in the order decoding checks
    /// them (the first at fault is the one named). Encoding writes the same list, keys sorted.
    static let fields: [SettingsField<PlayerSettings>] = [
        .choice("speedLevel", \.speedLevel), .choice("audioCueMode", \.audioCueMode),
        .choice("laneChangeCue", \.laneChangeCue), .integer("cueVolume", \.cueVolume),
        .integer("effectsVolume", \.effectsVolume), .value("mono", \.mono), .value("haptics", \.haptics),
        .value("announcements", \.announcements), .integer("scoreAnnouncementEvery", \.scoreAnnouncementEvery),
        .choice("font", \.font), .choice("theme", \.theme),
        .choice("contrast", \.contrast), .choice("reduceMotion", \.reduceMotion), .integer("textSize", \.textSize),
        .choice("language", \.language), .value("tutorialDone", \.tutorialDone), .value("controls", \.controls),
    ]

    public init(from decoder: any Decoder) throws {
        self = try SettingsJSON.decode(Self.fields, from: decoder, over: SettingsJSON.base(decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try SettingsJSON.encode(self, Self.fields, to: encoder)
    }
}

extension PlayerSettings.Haptics: Codable {
    static let fields: [SettingsField<Self>] = [
        .value("enabled", \.enabled), .value("crash", \.crash), .value("step", \.step), .value("move", \.move),
    ]

    public init(from decoder: any Decoder) throws {
        self = try SettingsJSON.decode(Self.fields, from: decoder, over: SettingsJSON.base(decoder).haptics)
    }

    public func encode(to encoder: any Encoder) throws {
        try SettingsJSON.encode(self, Self.fields, to: encoder)
    }
}

extension PlayerSettings.Controls: Codable {
    static let fields: [SettingsField<Self>] = [
        .value("keyboard", \.keyboard), .value("letterKeys", \.letterKeys), .value("touch", \.touch),
        .value("swipe", \.swipe), .value("wheel", \.wheel), .value("gamepad", \.gamepad),
        .integer("inputCooldownMs", \.inputCooldownMs), .value("oneSwitch", \.oneSwitch),
        .integer("scanIntervalMs", \.scanIntervalMs), .choice("switchMode", \.switchMode),
        SettingsField("keyBindings", decode: Self.decodeBindings, encode: Self.encodeBindings),
    ]

    public init(from decoder: any Decoder) throws {
        self = try SettingsJSON.decode(Self.fields, from: decoder, over: SettingsJSON.base(decoder).controls)
    }

    public func encode(to encoder: any Encoder) throws {
        try SettingsJSON.encode(self, Self.fields, to: encoder)
    }

    /// Actions left out keep their current key, as fields do.
    @Sendable private static func decodeBindings(_ c: KeyedDecodingContainer<SettingsJSON.Key>, _ name: String,
                                                 _ controls: inout Self, _ base: Self) throws {
        guard c.contains(.init(name)) else { return }
        let bindings = try c.nestedContainer(keyedBy: SettingsJSON.Key.self, forKey: .init(name))
        var merged = base.keyBindings
        for key in bindings.allKeys {
            guard let action = PlayerSettings.KeyAction(rawValue: key.stringValue) else {
                let actions = PlayerSettings.KeyAction.allCases.map(\.rawValue).joined(separator: ", ")
                throw DecodingError.dataCorrupted(.init(
                    codingPath: bindings.codingPath + [key],
                    debugDescription: "is not an action that takes a key; the actions are \(actions)"))
            }
            merged[action] = try bindings.value(key.stringValue, base.keyBindings[action] ?? "")
        }
        controls.keyBindings = merged
    }

    @Sendable private static func encodeBindings(_ c: inout KeyedEncodingContainer<SettingsJSON.Key>, _ name: String,
                                                 _ controls: Self) throws {
        var bindings = c.nestedContainer(keyedBy: SettingsJSON.Key.self, forKey: .init(name))
        for (action, key) in controls.keyBindings.sorted(by: { $0.key < $1.key }) {
            try bindings.encode(key, forKey: .init(action.rawValue))
        }
    }
}

/// One field of a settings object (`Root`): its JSON name and how it is read over a base and
/// written, so that each name is written once, in its object's `fields`.
struct SettingsField<Root>: Sendable {
    typealias Decode = @Sendable (KeyedDecodingContainer<SettingsJSON.Key>, String, inout Root, Root) throws -> Void
    typealias Encode = @Sendable (inout KeyedEncodingContainer<SettingsJSON.Key>, String, Root) throws -> Void

    let name: String
    let decode: Decode
    let encode: Encode

    init(_ name: String, decode: @escaping Decode, encode: @escaping Encode) {
        self.name = name
        self.decode = decode
        self.encode = encode
    }

    /// A value JSON holds as itself: true/false, or an object of its own fields.
    static func value<Value: Codable & Sendable>(_ name: String, _ path: WritableKeyPath<Root, Value> & Sendable) -> Self {
        Self(name, decode: { c, name, root, base in root[keyPath: path] = try c.value(name, base[keyPath: path]) },
             encode: { c, name, root in try c.encode(root[keyPath: path], forKey: .init(name)) })
    }

    /// One of a set of named values, written as its name.
    static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(_ name: String, _ path: WritableKeyPath<Root, Choice> & Sendable) -> Self
    where Choice.RawValue == String {
        Self(name, decode: { c, name, root, base in root[keyPath: path] = try c.choice(name, base[keyPath: path]) },
             encode: { c, name, root in try c.encode(root[keyPath: path].rawValue, forKey: .init(name)) })
    }

    /// A whole number (80.5 is refused naming the field).
    static func integer(_ name: String, _ path: WritableKeyPath<Root, Int> & Sendable) -> Self {
        Self(name, decode: { c, name, root, base in root[keyPath: path] = try c.integer(name, base[keyPath: path]) },
             encode: { c, name, root in try c.encode(root[keyPath: path], forKey: .init(name)) })
    }
}

/// The JSON plumbing behind `PlayerSettings`' Codable conformance: the document decoded over
/// a base, strict field checks, and decoding errors turned into `StoreError`s with a path.
enum SettingsJSON {
    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static let baseKey = CodingUserInfoKey(rawValue: "retrorapid.settings.base")!
    static let lenientKey = CodingUserInfoKey(rawValue: "retrorapid.settings.lenient")!

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// An object read by its fields over `base`: a field left out keeps `base`'s value; one
    /// not in `fields` is refused (`container(_:known:)`).
    static func decode<Root>(_ fields: [SettingsField<Root>], from decoder: any Decoder, over base: Root) throws -> Root {
        let c = try container(decoder, known: fields.map(\.name))
        var root = base
        for field in fields { try field.decode(c, field.name, &root, base) }
        return root
    }

    static func encode<Root>(_ root: Root, _ fields: [SettingsField<Root>], to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for field in fields { try field.encode(&c, field.name, root) }
    }

    /// The document fields left out of the JSON fall back to.
    static func base(_ decoder: any Decoder) -> PlayerSettings {
        decoder.userInfo[baseKey] as? PlayerSettings ?? .defaults
    }

    /// The object at this level, with any field outside `known` refused, unless decoding
    /// leniently (documents already stored, written by a build that knew more fields).
    static func container(_ decoder: any Decoder, known: [String]) throws -> KeyedDecodingContainer<Key> {
        let c = try decoder.container(keyedBy: Key.self)
        guard decoder.userInfo[lenientKey] as? Bool != true else { return c }
        for key in c.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: c.codingPath + [key],
                debugDescription: "is not a settings field; the fields here are \(known.joined(separator: ", "))"))
        }
        return c
    }

    /// Decodes `data` over `base`, turning every decoding failure into `StoreError.invalid`
    /// with the field's path (`settings.controls.keyBindings.left`).
    static func decode(_ data: Data, over base: PlayerSettings, lenient: Bool) throws(StoreError) -> PlayerSettings {
        let decoder = JSONDecoder()
        decoder.userInfo[baseKey] = base
        decoder.userInfo[lenientKey] = lenient
        do {
            return try decoder.decode(PlayerSettings.self, from: data)
        } catch let error as DecodingError {
            throw storeError(error)
        } catch {
            throw StoreError(.invalid, "settings could not be read: \(error)", field: "settings")
        }
    }

    static func storeError(_ error: DecodingError) -> StoreError {
        func field(_ path: [any CodingKey]) -> String {
            (["settings"] + path.map(\.stringValue)).joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context):
            let expected = type == Bool.self ? "true or false"
                : type == String.self ? "a string"
                : type == Double.self || type == Int.self ? "a whole number"
                : String(describing: type).hasPrefix("Dictionary") ? "an object"
                : "a value of type \(type)"
            return StoreError(.invalid, "must be \(expected)", field: field(context.codingPath))
        case .valueNotFound(let type, let context):
            let expected = type == Bool.self ? "true or false" : "a value"
            return StoreError(.invalid, "must be \(expected), not null", field: field(context.codingPath))
        case .keyNotFound(let key, let context):
            return StoreError(.invalid, "is missing", field: field(context.codingPath + [key]))
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return StoreError(.invalid, "is not valid JSON: send one JSON object", field: "settings")
            }
            return StoreError(.invalid, context.debugDescription, field: field(context.codingPath))
        @unknown default:
            return StoreError(.invalid, "settings could not be read: \(error)", field: "settings")
        }
    }
}

extension KeyedDecodingContainer where K == SettingsJSON.Key {
    /// The field's value, `fallback` when it is absent; an explicit null is refused.
    func value<T: Decodable>(_ name: String, _ fallback: T) throws -> T {
        let key = K(name)
        guard contains(key) else { return fallback }
        return try decode(T.self, forKey: key)
    }

    /// A string that must be one of `Choice`'s raw values.
    func choice<Choice: RawRepresentable & CaseIterable>(_ name: String, _ fallback: Choice) throws -> Choice
    where Choice.RawValue == String {
        let text: String = try value(name, fallback.rawValue)
        guard let choice = Choice(rawValue: text) else {
            let choices = Choice.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath + [K(name)], debugDescription: "must be one of \(choices), got '\(text)'"))
        }
        return choice
    }

    /// A whole number. Read as a double first so that 80.5 is refused here, with the field's
    /// name, rather than by JSONDecoder as "not valid JSON".
    func integer(_ name: String, _ fallback: Int) throws -> Int {
        let number: Double = try value(name, Double(fallback))
        guard number.rounded() == number, abs(number) < 1e15 else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath + [K(name)], debugDescription: "must be a whole number, got \(number)"))
        }
        return Int(number)
    }
}
