import Foundation
@testable import RetroRapidDomain
import Testing

/// PBKDF2-HMAC-SHA256 against RFC 7914's vectors, and the operator's password made, hashed and
/// checked by it.
@Suite struct OperatorPasswordTests {
    @Test(arguments: [
        // RFC 7914, section 11.
        ("passwd", "salt", 1, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                              + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
        ("Password", "NaCl", 80_000, "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                                     + "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
    ])
    func pbkdf2MatchesTheRFCVectors(password: String, salt: String, iterations: Int, hex: String) {
        let derived = PBKDF2.sha256(password: Array(password.utf8), salt: Array(salt.utf8), iterations: iterations, length: 64)
        #expect(SHA256.hex(derived) == hex)
        // A shorter key is the longer one's start.
        #expect(PBKDF2.sha256(password: Array(password.utf8), salt: Array(salt.utf8), iterations: iterations, length: 20)
            == Array(derived.prefix(20)))
    }

    @Test func aNewPasswordIsTwentyCrockfordCharactersInFives() {
        var seen = Set<String>()
        for _ in 0..<50 {
            let password = OperatorPassword.generate()
            let groups = password.split(separator: "-")
            #expect(groups.count == 4 && groups.allSatisfy { $0.count == 5 }, "\(password)")
            #expect(password.allSatisfy { $0 == "-" || "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) }, "\(password)")
            seen.insert(password)
        }
        #expect(seen.count == 50)
    }

    @Test func aHashMatchesItsPasswordTypedLooselyAndNothingElse() {
        let password = "K7Q4M-2XD9P-3RTV8-6WNAB"
        let stored = OperatorPassword.hash(password, iterations: 1_000)
        #expect(stored.hasPrefix("pbkdf2-sha256$1000$"))
        #expect(OperatorPassword.matches(password, stored: stored))
        // Case, spaces and dashes do not matter; O, I and L read as 0 and 1.
        #expect(OperatorPassword.matches("k7q4m 2xd9p 3rtv8 6wnab", stored: stored))
        #expect(OperatorPassword.matches("K7Q4M2XD9P3RTV86WNAB", stored: stored))
        #expect(!OperatorPassword.matches("K7Q4M-2XD9P-3RTV8-6WNAC", stored: stored))
        #expect(!OperatorPassword.matches("", stored: stored))
        // The same password hashes differently each time (a salt of its own).
        #expect(OperatorPassword.hash(password, iterations: 1_000) != stored)
        let withO = OperatorPassword.hash("A0B1C", iterations: 10)
        #expect(OperatorPassword.matches("aobic", stored: withO) && OperatorPassword.matches("AOBLC", stored: withO))
    }

    /// The typed text comes from outside: past the longest a made password is typed, it matches
    /// nothing and is not hashed at all (a long key is hashed again on every round).
    @Test func typedTextLongerThanAnyPasswordMatchesNothing() {
        let long = String(repeating: "A", count: 21)
        let stored = OperatorPassword.hash(long, iterations: 10)
        #expect(OperatorPassword.matches(long, stored: stored))
        let padded = long + String(repeating: " ", count: OperatorPassword.maximumTypedLength - long.count)
        #expect(OperatorPassword.matches(padded, stored: stored))
        #expect(!OperatorPassword.matches(padded + " ", stored: stored))
        // With 10 million rounds stored, a 64 KiB guess would take hours if it were hashed.
        let slow = "pbkdf2-sha256$10000000$00112233445566778899aabbccddeeff$" + String(repeating: "00", count: 32)
        #expect(!OperatorPassword.matches(String(repeating: "x", count: 65_536), stored: slow))
    }

    /// The stored form comes from the database: whatever it holds is a refusal, never a trap or
    /// a runaway loop.
    @Test(arguments: [
        "", "plain text", "pbkdf2-sha256$1000$00$",
        "pbkdf2-sha256$0$00112233445566778899aabbccddeeff$" + String(repeating: "00", count: 32),
        "pbkdf2-sha256$-5$00112233445566778899aabbccddeeff$" + String(repeating: "00", count: 32),
        "pbkdf2-sha256$99999999999$00112233445566778899aabbccddeeff$" + String(repeating: "00", count: 32),
        "pbkdf2-sha256$99999999999999999999999$00$" + String(repeating: "00", count: 32),
        "pbkdf2-sha256$1000$zz$" + String(repeating: "00", count: 32),
        "pbkdf2-sha256$1000$00112233445566778899aabbccddeeff$00",
        "pbkdf2-sha1$1000$00112233445566778899aabbccddeeff$" + String(repeating: "00", count: 32),
        "pbkdf2-sha256$1000$00112233445566778899aabbccddeeff$" + String(repeating: "00", count: 32) + "$extra",
    ])
    func anUnreadableStoredFormMatchesNothing(stored: String) {
        #expect(!OperatorPassword.matches("K7Q4M-2XD9P-3RTV8-6WNAB", stored: stored))
    }

    @Test func namesAreTrimmedLowercasedAndChecked() throws {
        #expect(try OperatorAccount.validatedName("  Ada.L ") == "ada.l")
        #expect(try OperatorAccount.validatedName("night_shift-2") == "night_shift-2")
        for bad in ["", "a", String(repeating: "a", count: 33), "2fast", "ada lovelace", "ada@home", "émile", "-ada"] {
            let error = #expect(throws: StoreError.self, "\(bad)") { try OperatorAccount.validatedName(bad) }
            #expect(error?.code == .invalid && error?.field == "name")
        }
    }
}
