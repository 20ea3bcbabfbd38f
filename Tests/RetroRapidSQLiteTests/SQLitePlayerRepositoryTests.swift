import Foundation
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

@Suite struct SQLitePlayerRepositoryTests {
    /// 2026-01-15T10:00:00Z: tests pass time in, so nothing depends on the clock.
    let t0 = Date(timeIntervalSince1970: 1_768_471_200)

    // MARK: - Tokens

    // Stays here: what the token_hash column and the files on disk hold.
    @Test func tokenIs43URLSafeCharactersAndOnlyItsHashIsStored() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            let (player, token) = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Ada", deviceLabel: "Laptop", now: t0)

            #expect(token.count == 43)
            #expect(token.allSatisfy { base64URLAlphabet.contains($0) })
            let raw = try #require(decodeBase64URL(token))
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

    // MARK: - Creating and signing in

    // Stays here: the stored text of created_at (whole seconds, UTC); the rest of signing in is
    // in Tests/RetroRapidStorageTests/PlayerRepositoryContractTests.swift.
    @Test func createdAtIsStoredInWholeSecondsAsUTCText() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            _ = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: " Ada ", deviceLabel: "Laptop", now: t0.addingTimeInterval(0.75))
            #expect(try db.column("SELECT created_at FROM players") == [.text("2026-01-15T10:00:00Z")])
        }
    }

    // Stays here: the stored text of a device label, exactly as given.
    @Test func aLabelIsStoredAsGiven() throws {
        try withTemporaryDirectory { folder in
            let db = try migratedDatabase(in: folder)
            _ = try SQLPlayerRepository(executor: SQLiteExecutor(database: db)).createPlayer(displayName: "Bob", deviceLabel: "📱 Phone (Zoë's)", now: t0)
            #expect(try db.column("SELECT label FROM devices") == [.text("📱 Phone (Zoë's)")])
        }
    }
}
