import Foundation
import RetroRapidDomain

/// Text (as UTF-8 bytes, invalid sequences repaired) into `DisplayName`
/// (Sources/RetroRapidDomain/DisplayName.swift), what sign-up and PATCH /api/v1/players/me
/// run on every name. Properties:
/// - a refusal is `.invalid` on `displayName` and ends with the rules, so the player learns
///   what is allowed;
/// - an accepted name is stored as it is shown: 1 to 24 characters, NFC, no space at either
///   end, no run of spaces, and accepting it again gives the same name (one name, one form).
public enum DisplayNameFuzzTarget: FuzzTarget {
    public static let name = "display-name"
    public static let outcomes: Set<String> = ["accepted", "refused"]

    public static func check(_ input: [UInt8]) throws(PropertyViolation) -> String {
        let text = String(decoding: input, as: UTF8.self)
        let name: DisplayName
        do {
            name = try DisplayName(text)
        } catch let error as StoreError {
            guard error.code == .invalid, error.field == "displayName", error.message.hasSuffix(DisplayName.rules) else {
                throw PropertyViolation("a refusal that is not .invalid on displayName with the rules: \(error)")
            }
            return "refused"
        } catch {
            throw PropertyViolation("an error that is not a StoreError: \(error)")
        }
        let value = name.value
        guard (1...DisplayName.maximumLength).contains(value.count) else { throw PropertyViolation("accepted '\(value)' of \(value.count) characters") }
        guard value == value.precomposedStringWithCanonicalMapping else { throw PropertyViolation("accepted '\(value)', not NFC") }
        guard !value.hasPrefix(" "), !value.hasSuffix(" "), !value.contains("  ") else {
            throw PropertyViolation("accepted '\(value)' with a space at an end or a run of spaces")
        }
        let again: DisplayName
        do {
            again = try DisplayName(value)
        } catch {
            throw PropertyViolation("accepted '\(value)', whose stored form is then refused: \(error)")
        }
        guard again.value == value else { throw PropertyViolation("'\(value)' accepted again becomes '\(again.value)'") }
        return "accepted"
    }
}
