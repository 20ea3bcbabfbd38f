import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Decodes URL-safe base64 without padding with Foundation, independently of `DeviceToken`.
fileprivate func playerTestsDecodeBase64URL(_ text: String) -> [UInt8]? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
    return Data(base64Encoded: standard).map { [UInt8]($0) }
}

fileprivate let playerTestsBase64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

@Suite struct SQLitePlayerRepositoryTests {
    /// 2026-01-15T10:00:00Z: tests pass time in, so nothing depends on the clock.
    let t0 = Date(timeIntervalSince1970: 1_768_471_200)

    // MARK: - Tokens

    // Stays here: what the token_hash column and the files on disk hold.
    @Test func tokenIs43URLSafeCharactersAndOnlyItsHashIsStored() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let (player, token) = try SQLitePlayerRepository(database: db).createPlayer(displayName: "Ada", deviceLabel: "Laptop", now: t0)

            #expect(token.count == 43)
            #expect(token.allSatisfy { playerTestsBase64URLAlphabet.contains($0) })
            let raw = try #require(playerTestsDecodeBase64URL(token))
            #expect(raw.count == 32)

            let stored = try db.column("SELECT token_hash FROM devices")
            #expect(stored == [.blob(SHA256.hash(raw))])
            // No column anywhere holds the token, as text or as its raw bytes.
            let textHits = try db.scalar("SELECT count(*) FROM devices WHERE CAST(token_hash AS TEXT) = ? OR label = ?", [token, token])
            #expect(textHits == .integer(0))

            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            let files = try bytesOfAllFiles(in: folder)
            #expect(!bytes(files, contain: Array(token.utf8)))
            #expect(!bytes(files, contain: raw))
            // The search itself works: what is stored is found.
            #expect(bytes(files, contain: SHA256.hash(raw)))
            #expect(bytes(files, contain: Array(player.publicID.utf8)))
        }
    }

    // Stays here (as the two below): a DeviceToken value test that touches no storage.
    @Test func tokensAreDistinctAndParseBackToThemselves() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let token = DeviceToken.generate()
            #expect(seen.insert(token.text).inserted)
            #expect(DeviceToken(parsing: token.text) == token)
            #expect(token.hash == SHA256.hash(try #require(playerTestsDecodeBase64URL(token.text))))
        }
        // Every one of the 64 symbols turns up in the first 42 positions.
        #expect(Set(seen.flatMap { $0.dropLast() }) == playerTestsBase64URLAlphabet)
    }

    @Test func tokenDescriptionDoesNotLeakTheToken() {
        let token = DeviceToken.generate()
        #expect(!"\(token)".contains(token.text))
        #expect(!String(reflecting: token).contains(token.text))
    }

    @Test func malformedTokensAreRefusedBeforeHashing() throws {
        let valid = DeviceToken.generate().text
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: valid.last!)!
        // Same 32 bytes, but a spare low bit set in the last symbol: not the canonical spelling.
        let nonCanonical = String(valid.dropLast()) + String(alphabet[last + 1])
        for text in [
            "", String(valid.dropLast()), valid + "A", valid + "=",
            String(valid.dropLast()) + "+", "/" + String(valid.dropFirst()),
            String(valid.dropLast()) + "é", nonCanonical,
            String(repeating: "A", count: 44),
        ] {
            #expect(DeviceToken(parsing: text) == nil, "\(text) should not parse")
        }
        #expect(DeviceToken(parsing: valid) != nil)
        #expect(DeviceToken(parsing: String(repeating: "A", count: 43)) != nil)
    }

    // MARK: - Creating and signing in

    // Stays here: the stored text of created_at (whole seconds, UTC); the rest of signing in is
    // in Tests/RetroRapidStorageTests/PlayerRepositoryContractTests.swift.
    @Test func createdAtIsStoredInWholeSecondsAsUTCText() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            _ = try SQLitePlayerRepository(database: db).createPlayer(displayName: " Ada ", deviceLabel: "Laptop", now: t0.addingTimeInterval(0.75))
            #expect(try db.column("SELECT created_at FROM players") == [.text("2026-01-15T10:00:00Z")])
        }
    }

    // Stays here: the stored text of a device label, exactly as given.
    @Test func aLabelIsStoredAsGiven() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            _ = try SQLitePlayerRepository(database: db).createPlayer(displayName: "Bob", deviceLabel: "📱 Phone (Zoë's)", now: t0)
            #expect(try db.column("SELECT label FROM devices") == [.text("📱 Phone (Zoë's)")])
        }
    }
}
