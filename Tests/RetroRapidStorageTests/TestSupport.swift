import Foundation
import RetroRapidStorage

/// Runs `body` with a fresh, empty folder that is removed afterwards: every test gets its
/// own real database files and nothing leaks between tests.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("retrorapid-storage-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}

/// A database file `test.sqlite` in `folder`.
func openDatabase(in folder: URL, synchronous: Database.Synchronous = .full) throws -> Database {
    try Database(path: folder.appendingPathComponent("test.sqlite").path, synchronous: synchronous)
}

extension Database {
    /// The first column of every row of `sql`.
    func column(_ sql: String, _ values: [any DatabaseValueConvertible] = []) throws -> [DatabaseValue] {
        try prepare(sql).query(values) { $0.value(at: 0) }
    }

    /// The first column of the first row of `sql`.
    func scalar(_ sql: String, _ values: [any DatabaseValueConvertible] = []) throws -> DatabaseValue {
        try column(sql, values).first ?? .null
    }

    /// Every table's schema and rows, as text: equal before and after means nothing changed.
    func dump() throws -> [String] {
        let tables = try prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .query { ($0.string(at: 0), $0.string(at: 1)) }
        var lines: [String] = []
        for (name, sql) in tables {
            lines.append(sql)
            lines += try prepare("SELECT * FROM \"\(name)\" ORDER BY rowid").query { row in
                (0..<row.columnCount).map { "\(row.value(at: $0))" }.joined(separator: "|")
            }
        }
        let others = try prepare("SELECT sql FROM sqlite_schema WHERE type <> 'table' AND sql IS NOT NULL ORDER BY name")
            .query { $0.string(at: 0) }
        return lines + others
    }
}

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
