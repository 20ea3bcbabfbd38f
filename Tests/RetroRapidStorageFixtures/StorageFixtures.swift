import Foundation
import RetroRapidDomain
import RetroRapidRules

// Fixtures shared by the contract tests (Tests/RetroRapidStorageTests) and SQLite's own tests
// (Tests/RetroRapidSQLiteTests): folders, the product's migrations, dates, games and codes,
// none of them tied to a backend.

/// Runs `body` with a fresh, empty folder that is removed afterwards: every test gets its
/// own real database files and nothing leaks between tests.
public func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("retrorapid-storage-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}

/// The product's own `Migrations/` folder, found from this file
/// (Tests/RetroRapidStorageFixtures/ → the package root): the tests migrate with what ships.
public let productMigrations = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Migrations", isDirectory: true)

/// An ISO-8601 UTC date, `utc("2026-01-01T00:00:00Z")`, parsed by Foundation independently of
/// the repositories' own time code. A malformed literal is a mistake in the test: it stops the run.
public func utc(_ text: String) -> Date {
    guard let date = try? Date(text, strategy: .iso8601) else { preconditionFailure("bad test date \(text)") }
    return date
}

/// A finished game with this score that `GameRepository.record` accepts (it does not replay on
/// record): no moves, `score + 6` steps, ended at `endedAt` after `playedSeconds`.
public func scoredGame(player: Int64, level: SpeedLevel = .fast, score: Int, endedAt: Date, playedSeconds: Double = 30) -> NewGame {
    let steps = max(score, 0) + 6
    return NewGame(playerID: player, level: level, seed: 1, inputLog: InputLog(steps: steps, moves: []),
                   score: score, steps: steps, endReason: .crash, startedAt: endedAt.addingTimeInterval(-playedSeconds),
                   endedAt: endedAt, durationMilliseconds: Int(playedSeconds * 1000))
}

/// The launch offer (docs/API.md): £0.99 until the end of 28 February 2026, created on 1 January.
@discardableResult
public func createArcticConf(_ codes: CodeRepository, maxRedemptions: Int? = nil) throws -> PromoCode {
    try codes.create(
        code: "ARCTICCONF",
        kind: .discount(Money(minorUnits: 99, currency: "GBP")),
        expiresAt: utc("2026-02-28T23:59:59Z"),
        maxRedemptions: maxRedemptions,
        now: utc("2026-01-01T00:00:00Z")
    )
}

/// A player "Racer <name>" with one device, created through `PlayerRepository` (so through every
/// backend alike): a board then shows whose row is whose. Players made one after another get
/// rising ids.
public func addRacer(_ players: any PlayerRepository, _ name: String, now: Date = utc("2026-01-01T00:00:00Z")) throws -> Player {
    try players.createPlayer(displayName: "Racer \(name)", deviceLabel: "Laptop", now: now).player
}

/// Decodes URL-safe base64 without padding with Foundation, independently of `DeviceToken`.
public func decodeBase64URL(_ text: String) -> [UInt8]? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
    return Data(base64Encoded: standard).map { [UInt8]($0) }
}

/// The 64 symbols of URL-safe base64.
public let base64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
