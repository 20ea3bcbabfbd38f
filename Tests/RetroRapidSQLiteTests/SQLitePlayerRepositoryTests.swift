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

    @Test func createdPlayerAuthenticatesWithItsTokenAndLastSeenMoves() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let players = SQLitePlayerRepository(database: db)
            let (player, token) = try players.createPlayer(displayName: " Ada ", deviceLabel: "Laptop", now: t0.addingTimeInterval(0.75))
            #expect(player.displayName == "Ada")
            #expect(player.createdAt == t0)
            #expect(try db.column("SELECT created_at FROM players") == [.text("2026-01-15T10:00:00Z")])

            let signedIn = try players.authenticate(token: token, now: t0.addingTimeInterval(390))
            #expect(signedIn.player == player)
            let devices = try players.devices(playerID: player.id, currentDeviceID: signedIn.deviceID)
            #expect(devices.map(\.id) == [signedIn.deviceID])
            #expect(devices.first?.lastSeenAt == t0.addingTimeInterval(390))
            #expect(devices.first?.createdAt == t0)
            #expect(devices.first?.label == "Laptop")
            #expect(devices.first?.isCurrent == true)
            #expect(devices.first?.isRevoked == false)
        }
    }

    @Test func refusedNameOrLabelCreatesNothing() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let players = SQLitePlayerRepository(database: db)
            let before = try db.dump()
            let badName = #expect(throws: StoreError.self) { try players.createPlayer(displayName: "Bob\u{202E}", deviceLabel: "Laptop", now: t0) }
            #expect(badName?.code == .invalid)
            #expect(badName?.field == "displayName")
            let badLabel = #expect(throws: StoreError.self) { try players.createPlayer(displayName: "Bob", deviceLabel: "Lap\ttop", now: t0) }
            #expect(badLabel?.field == "deviceLabel")
            let longLabel = #expect(throws: StoreError.self) { try players.createPlayer(displayName: "Bob", deviceLabel: String(repeating: "x", count: 65), now: t0) }
            #expect(longLabel?.field == "deviceLabel")
            #expect(try db.dump() == before)
            // A label may hold any visible text, emoji included: only its player sees it.
            _ = try players.createPlayer(displayName: "Bob", deviceLabel: "📱 Phone (Zoë's)", now: t0)
            #expect(try db.column("SELECT label FROM devices") == [.text("📱 Phone (Zoë's)")])
        }
    }

    // MARK: - Devices

}
