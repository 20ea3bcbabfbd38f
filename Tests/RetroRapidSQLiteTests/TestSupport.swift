import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidStorageFixtures

// MARK: - Folders and database files


/// A database file `fileName` in `folder`.
func openDatabase(
    in folder: URL, named fileName: String = "test.sqlite", synchronous: Database.Synchronous = .full
) throws -> Database {
    try Database(path: folder.appendingPathComponent(fileName).path, synchronous: synchronous)
}


/// A database file `fileName` in `folder`, migrated by the real `Migrator` with the product's
/// `Migrations/`.
func migratedDatabase(in folder: URL, named fileName: String = "test.sqlite") throws -> Database {
    let db = try openDatabase(in: folder, named: fileName)
    try Migrator(database: db, directory: productMigrations).migrate()
    return db
}

/// Runs `body` with a migrated database file `fileName` in a fresh temporary folder.
func withMigratedDatabase(named fileName: String = "test.sqlite", _ body: (Database) throws -> Void) throws {
    try withTemporaryDirectory { folder in
        try body(try migratedDatabase(in: folder, named: fileName))
    }
}

// MARK: - Rows and values

/// Inserts a bare `players` row with SQL (no repository, no validation) and returns its id.
func insertPlayer(
    _ db: Database, _ publicID: String = "p-1", name: String = "Racer", createdAt: String = "2026-01-01T00:00:00Z"
) throws -> Int64 {
    try db.prepare("INSERT INTO players (public_id, display_name, created_at) VALUES (?, ?, ?)")
        .execute([publicID, name, createdAt])
    return db.lastInsertRowID
}




// MARK: - On disk

/// Every byte of every file in `folder` (a database, its WAL and shared-memory files), in name
/// order: what a search for a secret must not find on disk.
func bytesOfAllFiles(in folder: URL) throws -> [UInt8] {
    var all: [UInt8] = []
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
        all += [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }
    return all
}

/// Whether `needle` occurs as a run of bytes in `haystack`.
func bytes(_ haystack: [UInt8], contain needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains { start in
        haystack[start..<(start + needle.count)].elementsEqual(needle)
    }
}

// MARK: - Reading a database back

extension Database {
    /// The first column of every row of `sql`.
    func column(_ sql: String, _ values: [any SQLBindable] = []) throws -> [DatabaseValue] {
        try prepare(sql).query(values) { $0.value(at: 0) }
    }

    /// The first column of the first row of `sql`.
    func scalar(_ sql: String, _ values: [any SQLBindable] = []) throws -> DatabaseValue {
        try column(sql, values).first ?? .null
    }
}

// MARK: - Threads

/// A value shared with a background thread, guarded by the lock it lives with.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
